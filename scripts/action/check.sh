#!/usr/bin/env bash
# The GitHub Action's check step (action.yml): `puppet-xpp validate`, then `puppet-xpp lint`, on the
# input paths, with `--format github` (one workflow command per problem: GitHub shows each as an
# annotation on its line).  Both always run; the exit status is the worse of the two (0 clean, 1
# problems, 2 a file or option that could not be handled).  Writes the step outputs `errors` and
# `warnings` and a line to the job summary.
#
# Environment: PUPPET_XPP (the command; default puppet-xpp), INPUT_PATHS, INPUT_PUPPET_VERSION,
# INPUT_LINT, INPUT_LINT_OPTIONS, INPUT_FAIL_ON_WARNINGS (action.yml's inputs), GITHUB_WORKSPACE,
# GITHUB_OUTPUT, GITHUB_STEP_SUMMARY (GitHub's).
set -uo pipefail

command=${PUPPET_XPP:-puppet-xpp}
cd "${GITHUB_WORKSPACE:-.}" || exit 2

truthy() {
  case "${1,,}" in
    true | yes | on | 1) return 0 ;;
    false | no | off | 0 | '') return 1 ;;
    *)
      echo "::error title=puppet-xpp::not a boolean: '$1' (true or false)"
      exit 2
      ;;
  esac
}

# paths: separated by spaces or new lines (a path with a space cannot be given; none is in a module)
read -r -d '' -a paths <<<"${INPUT_PATHS:-.}"
[ "${#paths[@]}" -gt 0 ] || paths=(.)
read -r -d '' -a lint_options <<<"${INPUT_LINT_OPTIONS:-}"
fail_on_warnings=false
truthy "${INPUT_FAIL_ON_WARNINGS:-false}" && fail_on_warnings=true

workspace=$(pwd -P)
# annotations name files relative to the workspace, as GitHub places them: "./x.pp" (a directory
# walk from ".") and "$GITHUB_WORKSPACE/x.pp" (an absolute input path) become "x.pp"
relative() {
  sed -E -e "s#^(::[a-z]+ file=)\./+#\1#" -e "s#^(::[a-z]+ file=)${workspace//#/\\#}/+#\1#"
}

status=0
report=$(mktemp)
trap 'rm -f "$report"' EXIT

run() {
  local rc
  "$@" | relative | tee -a "$report"
  rc=${PIPESTATUS[0]}
  [ "$rc" -gt "$status" ] && status=$rc
  return 0
}

echo "::group::puppet-xpp validate ${paths[*]}"
run "$command" validate --format github --puppet-version "${INPUT_PUPPET_VERSION:-8}" "${paths[@]}"
echo "::endgroup::"

if truthy "${INPUT_LINT:-true}"; then
  lint_flags=()
  $fail_on_warnings && lint_flags+=(--fail-on-warnings)
  echo "::group::puppet-xpp lint ${paths[*]}"
  run "$command" lint --format github "${lint_flags[@]}" "${lint_options[@]}" "${paths[@]}"
  echo "::endgroup::"
fi

errors=$(grep -c '^::error ' "$report")
warnings=$(grep -c '^::warning ' "$report")
# validate fails on errors only: a warning fails the step when asked
if $fail_on_warnings && [ "$warnings" -gt 0 ] && [ "$status" -eq 0 ]; then
  status=1
fi

if [ -n "${GITHUB_OUTPUT:-}" ]; then
  printf 'errors=%s\nwarnings=%s\n' "$errors" "$warnings" >>"$GITHUB_OUTPUT"
fi
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  printf 'puppet-xpp: %s error(s), %s warning(s) in %s\n' "$errors" "$warnings" "${paths[*]}" >>"$GITHUB_STEP_SUMMARY"
fi
exit "$status"
