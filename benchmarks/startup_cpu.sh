#!/usr/bin/env bash
# CPU of one CLI start (`python -m oomdoctor --demo --plain`), without the package's bytecode and with it
# cached, N runs each (default 8): what caching bytecode in CI saves each test that runs the CLI in a subprocess.
# The interpreter's and site-packages' own bytecode is warm in both (a private PYTHONPYCACHEPREFIX, filled first).
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD
n=${1:-8}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
warm=$scratch/warm
cold=$scratch/cold
env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$warm python -m oomdoctor --demo --plain >/dev/null 2>&1    # stdlib, site-packages, package
cp -r "$warm" "$cold"
rm -rf "$cold$PWD/oomdoctor"                                                    # the package's own bytecode gone
run() {                      # run LABEL PREFIX: n runs, user+sys of each appended to $scratch/LABEL
    for _ in $(seq "$n"); do
        PYTHONDONTWRITEBYTECODE=1 PYTHONPYCACHEPREFIX=$2 /usr/bin/time -f "%U %S" -a -o "$scratch/$1" \
            python -m oomdoctor --demo --plain >/dev/null 2>&1
    done
    awk -v label="$1" '/^[0-9]/ {s += $1 + $2; k++} END {printf "%s: %d runs, %.2f s of CPU each\n", label, k, s / k}' \
        "$scratch/$1"
}
run "without the package's bytecode" "$cold"
run "with it cached" "$warm"
