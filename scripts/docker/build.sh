#!/usr/bin/env bash
# Builds the puppet-xpp container image from this checkout (Dockerfile, .dockerignore) and checks that
# it runs: `puppet-xpp --version` in the image must print this checkout's version, as a user other
# than root.
#
#   scripts/docker/build.sh [IMAGE]        IMAGE defaults to puppet-xpp:<version>
#
# Needs a Docker engine and the registry of the base image (python:3.11-slim-bookworm).  Exit status:
# 0 built and checked, else the failing command's.
set -euo pipefail
cd "$(dirname "$0")/../.."

version=$(sed -nE 's/^__version__ = "([^"]+)"$/\1/p' puppet_xpp/__init__.py)
if [ -z "$version" ]; then
  echo "build.sh: no __version__ in puppet_xpp/__init__.py" >&2
  exit 2
fi
image=${1:-puppet-xpp:$version}

docker build --pull --build-arg "VERSION=$version" --tag "$image" .

said=$(docker run --rm "$image" --version)
if [ "$said" != "puppet-xpp $version" ]; then
  echo "build.sh: the image says '$said', not 'puppet-xpp $version'" >&2
  exit 1
fi
user=$(docker run --rm --entrypoint id "$image" -u)
if [ "$user" = 0 ]; then
  echo "build.sh: the image runs as root" >&2
  exit 1
fi
echo "$image: puppet-xpp $version, user $user"
