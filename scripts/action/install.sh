#!/usr/bin/env bash
# The GitHub Action's install step (action.yml): puppet-xpp into its own virtual environment under
# $RUNNER_TEMP, so that nothing of the workflow's Python changes.  PUPPET_XPP_VERSION: a version from
# PyPI; empty: the action's own revision ($GITHUB_ACTION_PATH).  PUPPET_XPP_PYTHON: the Python to use
# (actions/setup-python's; default python3).  Writes the path of the command as the step output
# `command`.
set -euo pipefail

python=${PUPPET_XPP_PYTHON:-python3}
venv="${RUNNER_TEMP:?RUNNER_TEMP is not set}/puppet-xpp"
if [ -n "${PUPPET_XPP_VERSION:-}" ]; then
  spec="puppet-xpp==${PUPPET_XPP_VERSION}"
else
  spec="${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set}"
fi

"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --disable-pip-version-check --no-input --quiet "$spec"
"$venv/bin/puppet-xpp" --version
echo "command=$venv/bin/puppet-xpp" >>"${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"
