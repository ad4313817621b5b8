#!/bin/sh
# How close the height estimated from a stream's headset (embody solve / --replay without
# --height) comes to the clip's own skeleton height, over a folder of CMU clips: makes each
# clip's stream (embody mocap2stream), reads the estimate and the clip's height from
# --print-config, and prints a table and the median and worst errors.
#
#   tests/bench/height_estimate.sh [BUILD_DIR] [CLIP_DIR]
#
# BUILD_DIR defaults to build, CLIP_DIR to ../shared/mocap-train beside the source tree
# (training clips: the estimator was not tuned on the evaluation clips).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
clips=${2:-$here/../../../shared/mocap-train}
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
awk '
    { e = $3 - $2; a = e < 0 ? -e : e; n++; err[n] = a; sum += e
      d = 1.75 - $2; def[n] = d < 0 ? -d : d
      if (a > worst) { worst = a; which = $1 }
      if ($2 < 1.6) { short++; short_sum += a } }
    END {
        # median of the absolute errors
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (err[j] < err[i]) { t = err[i]; err[i] = err[j]; err[j] = t }
        med = n % 2 ? err[(n + 1) / 2] : (err[n / 2] + err[n / 2 + 1]) / 2
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (def[j] < def[i]) { t = def[i]; def[i] = def[j]; def[j] = t }
        dmed = n % 2 ? def[(n + 1) / 2] : (def[n / 2] + def[n / 2 + 1]) / 2
        printf "| clips | median abs error | default 1.75 m: median abs error | mean error (bias) | worst (clip)              | clips under 1.6 m: mean abs error |\n"
        printf "|-------|------------------|----------------------------------|-------------------|---------------------------|-----------------------------------|\n"
        printf "| %5d | %13.1f cm | %29.1f cm | %14.1f cm | %5.1f cm (%-14s) | %2d clips: %5.1f cm                 |\n", n, 100 * med, 100 * dmed, 100 * sum / n, 100 * worst, which, short, short ? 100 * short_sum / short : 0
    }' "$out/rows"
