"""The runtime's plain-Ruby MessagePack reader (runtime/xpp/lib/puppet_x/xpp/msgpack_pure.rb, used where the
msgpack gem is missing, as in Puppet Server's JRuby) against the msgpack gem itself: for seeded random
documents in every MessagePack form (written by Python's msgpack, widest and narrowest encodings, extension
types, truncations and invalid bytes) both readers give the same values, or both refuse."""

from __future__ import annotations

import json
import os
import random
import struct
import subprocess

import msgpack
import pytest

from tests.conformance.puppets import missing_reason

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.path.join(REPO, "runtime", "xpp", "lib")

DRIVER = r"""
require 'json'
require 'msgpack'
require 'puppet_x/xpp/msgpack_pure'
P = PuppetX::Xpp::PureMsgpack
def norm(v)
  case v
  when Array then ['a', v.map { |x| norm(x) }]
  when Hash then ['h', v.map { |k, x| [norm(k), norm(x)] }]
  when String then [v.encoding == Encoding::BINARY ? 'b' : 's', v.bytes]
  when Float then ['f', [v].pack('G').bytes]
  else v
  end
end
def read(u, data)
  u.register_type(7) { |p| ['x7', p.bytes] }
  u.register_type(100) { |p| ['x100', p.bytes] }
  u.feed(data)
  vals = []
  loop do
    vals << norm(u.read)
  rescue EOFError
    return ['ok', vals]
  end
rescue StandardError => e
  ['refused', vals]
end
out = JSON.parse(STDIN.read).map do |hex|
  data = [hex].pack('H*')
  gem = read(MessagePack::Unpacker.new, data)
  pure = read(P::Unpacker.new, data)
  [gem, pure]
end
puts JSON.generate(out)
"""


def _value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return rng.choice([0, 1, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**64 - 1, -1, -32, -33])
    if kind == 1:
        return rng.randrange(-(2**63), 2**63)
    if kind == 2:
        return rng.choice([None, True, False, 1.5, -0.0, 1e300])
    if kind == 3:
        return "".join(
            chr(rng.choice([0x41, 0xE9, 0x2713, 0x1F600])) for _ in range(rng.choice([0, 5, 31, 32, 300]))
        )
    if kind == 4:
        return bytes(rng.randrange(256) for _ in range(rng.choice([0, 3, 300])))
    if kind == 5:
        return msgpack.ExtType(
            rng.choice([7, 100]),
            bytes(rng.randrange(256) for _ in range(rng.choice([1, 2, 4, 8, 16, 3, 300]))),
        )
    if kind == 6:
        return [_value(rng, depth + 1) for _ in range(rng.choice([0, 3, 16, 20]))]
    return {rng.randrange(1000): _value(rng, depth + 1) for _ in range(rng.choice([0, 2, 16, 17]))}


def _wide(v) -> bytes:
    """v in the widest forms MessagePack allows (the narrowest are what msgpack.packb writes)."""
    if isinstance(v, bool) or v is None:
        return msgpack.packb(v)
    if isinstance(v, int):
        return b"\xcf" + struct.pack(">Q", v) if v >= 0 else b"\xd3" + struct.pack(">q", v)
    if isinstance(v, float):
        return b"\xca" + struct.pack(">f", v) if v == 1.5 else b"\xcb" + struct.pack(">d", v)
    if isinstance(v, str):
        b = v.encode()
        return b"\xdb" + struct.pack(">I", len(b)) + b
    if isinstance(v, bytes):
        return b"\xc6" + struct.pack(">I", len(v)) + v
    if isinstance(v, msgpack.ExtType):
        return b"\xc9" + struct.pack(">Ib", len(v.data), v.code) + v.data
    if isinstance(v, list):
        return b"\xdd" + struct.pack(">I", len(v)) + b"".join(_wide(x) for x in v)
    return b"\xdf" + struct.pack(">I", len(v)) + b"".join(_wide(k) + _wide(x) for k, x in v.items())


@pytest.mark.skipif(missing_reason("7.23") is not None, reason=str(missing_reason("7.23")))
def test_plain_ruby_reader_equals_the_gem():
    rng = random.Random(23)
    docs = []
    for i in range(600):
        vals = [_value(rng) for _ in range(rng.randrange(1, 4))]
        data = b"".join(_wide(v) if i % 3 == 0 else msgpack.packb(v, use_bin_type=True) for v in vals)
        if i % 5 == 1:
            data = data[: rng.randrange(len(data) + 1)]  # cut short: the values before the cut, then EOF
        elif i % 5 == 2:
            data = data + bytes([rng.choice([0xC1, 0xD4])]) + b"\x09z"  # an invalid byte / unknown ext type
        docs.append(data.hex())
    out = subprocess.run(
        ["ruby", "-I", LIB, "-e", DRIVER], input=json.dumps(docs), capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    pairs = json.loads(out.stdout)
    assert len(pairs) == len(docs)
    outcomes = {gem[0] for gem, _ in pairs}
    assert outcomes == {"ok", "refused"}
    for hexdoc, (gem, pure) in zip(docs, pairs):
        assert pure == gem, hexdoc[:200]
