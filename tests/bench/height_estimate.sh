#!/bin/sh
# How close the height estimated from a stream's headset (embody solve / --replay without
# --height) comes to the clip's own skeleton height, over a folder of CMU clips: makes each
# clip's stream (embody mocap2stream), reads the estimate and the clip's height from
# --print-config, and prints a table and the median and worst errors.
#
#   tests/bench/height_estimate.sh [BUILD_DIR] [CLIP_DIR] [--rows] [--max-median CM]
#                                  [--max-error CM]
#
# BUILD_DIR defaults to build, CLIP_DIR to ../shared/mocap-train beside the source tree
# (training clips: the estimator's constants were chosen on them, never on the evaluation
# clips). --rows prints each clip's row too; --max-median and --max-error make it fail
# (exit 1) when the median or the worst absolute error is larger (for tests).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=build
clips=$here/../../../shared/mocap-train
rows=0 max_median="" max_error=""
n=0
while [ $# -gt 0 ]; do
    case $1 in
        --rows) rows=1 ;;
        --max-median) max_median=$2; shift ;;
        --max-error) max_error=$2; shift ;;
        -*) echo "height_estimate.sh: unknown option $1" >&2; exit 2 ;;
        *) n=$((n + 1)); if [ $n -eq 1 ]; then build=$1; else clips=$1; fi ;;
    esac
    shift
done
embody="$build/embody"
[ -x "$embody" ] || { echo "height_estimate.sh: $embody not found; build first" >&2; exit 1; }
[ -d "$clips" ] || { echo "height_estimate.sh: $clips: no such folder" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
value() { sed -n "s/^$1 *= \([0-9.]*\).*/\1/p"; }
for clip in "$clips"/*.bvh; do
    name=$(basename "$clip" .bvh)
    "$embody" mocap2stream "$clip" -o "$out/s.csv" -q 2>/dev/null || continue
    own=$("$embody" --print-config --avatar "$clip" 2>/dev/null | value "own height")
    est=$("$embody" --print-config --replay "$out/s.csv" 2>/dev/null | value "fitted height")
    [ -n "$own" ] && [ -n "$est" ] && echo "$name $own $est"
done >"$out/rows"
[ -s "$out/rows" ] || { echo "height_estimate.sh: no clip could be measured" >&2; exit 1; }
awk -v rows="$rows" -v max_median="$max_median" -v max_error="$max_error" '
    { e = $3 - $2; a = e < 0 ? -e : e; n++; err[n] = a; sum += e
      d = 1.75 - $2; def[n] = d < 0 ? -d : d
      name[n] = $1; own[n] = $2; est[n] = $3
      if (a > worst) { worst = a; which = $1 }
      if ($2 < 1.6) { short++; short_sum += a } }
    END {
        if (rows) {
            printf "| clip            | skeleton | estimated | error    |\n"
            printf "|-----------------|----------|-----------|----------|\n"
            for (i = 1; i <= n; i++)
                printf "| %-15s | %6.3f m | %7.3f m | %5.1f cm |\n", name[i], own[i], est[i], 100 * (est[i] - own[i])
            printf "\n"
        }
        # median of the absolute errors
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (err[j] < err[i]) { t = err[i]; err[i] = err[j]; err[j] = t }
        med = n % 2 ? err[(n + 1) / 2] : (err[n / 2] + err[n / 2 + 1]) / 2
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (def[j] < def[i]) { t = def[i]; def[i] = def[j]; def[j] = t }
        dmed = n % 2 ? def[(n + 1) / 2] : (def[n / 2] + def[n / 2 + 1]) / 2
        within = 0
        for (i = 1; i <= n; i++) if (err[i] <= 0.04) within++
        printf "| clips | median abs error | default 1.75 m: median abs error | mean error (bias) | worst (clip)              | within 4 cm | clips under 1.6 m: mean abs error |\n"
        printf "|-------|------------------|----------------------------------|-------------------|---------------------------|-------------|-----------------------------------|\n"
        printf "| %5d | %13.1f cm | %29.1f cm | %14.1f cm | %5.1f cm (%-14s) | %4d of %-3d | %2d clips: %5.1f cm                 |\n", n, 100 * med, 100 * dmed, 100 * sum / n, 100 * worst, which, within, n, short, short ? 100 * short_sum / short : 0
        bad = 0
        if (max_median != "" && 100 * med > max_median + 0) { printf "height_estimate.sh: the median error %.1f cm is above %s cm\n", 100 * med, max_median; bad = 1 }
        if (max_error != "" && 100 * worst > max_error + 0) { printf "height_estimate.sh: the worst error %.1f cm (%s) is above %s cm\n", 100 * worst, which, max_error; bad = 1 }
        exit bad
    }' "$out/rows"
