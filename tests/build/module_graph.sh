#!/bin/sh
# The module graph the build states holds for every pair of modules: a module's sources
# can include the headers of each module it uses (directly or through another) and of no
# other; a real source file with one crossing include added fails to compile; every folder
# of src/ is a declared module, and no source reaches around the graph with "../".
#   module_graph.sh CC MODULES_DIR SOURCE_DIR   (MODULES_DIR/graph.txt: cmake/EmbodyModules.cmake)
set -u
cc=$1 modules=$2 src=$3
graph=$modules/graph.txt
flags="-std=c11 -fsyntax-only -DCGLM_ALL_UNALIGNED $(pkg-config --cflags cglm openxr)"
fail=0
[ -s "$graph" ] || { echo "module_graph: no $graph (configure the build first)"; exit 1; }

# header_compiles MODULE HEADER: does MODULE's include folder let a source include HEADER?
header_compiles() {
    printf '#include "%s"\n' "$2" | $cc $flags -I"$modules/$1" -x c - -o /dev/null 2>/dev/null
}

allowed=0 refused=0
while IFS='|' read -r name folder uses headers; do
    while IFS='|' read -r other other_folder other_uses other_headers; do
        set -- $other_headers
        [ $# -gt 0 ] || continue
        probe=$1
        case " $name $uses " in
        *" $other "*)
            if header_compiles "$name" "$probe"; then allowed=$((allowed + 1)); else
                echo "FAIL: $name uses $other but cannot include $probe"; fail=1; fi ;;
        *)
            if header_compiles "$name" "$probe"; then
                echo "FAIL: $name does not use $other but can include $probe"; fail=1
            else refused=$((refused + 1)); fi ;;
        esac
    done < "$graph"
done < "$graph"
echo "module_graph: $allowed includes the graph allows compile, $refused it forbids do not"

# A module's private headers (those of its folder it does not offer) reach no other module.
private=0
for folder in $(cut -d'|' -f2 "$graph" | sort -u); do
    for header in "$folder"/*.h; do
        [ -e "$header" ] || continue
        relative=$(basename "$folder")/$(basename "$header")
        case " $(grep "|$folder|" "$graph" | cut -d'|' -f4 | tr '\n' ' ') " in
        *" $relative "*) continue ;; # offered by a module of this folder
        esac
        while IFS='|' read -r name other_folder other_uses other_headers; do
            [ "$other_folder" = "$folder" ] && continue
            if header_compiles "$name" "$relative"; then
                echo "FAIL: $name can include the private $relative"; fail=1
            else private=$((private + 1)); fi
        done < "$graph"
    done
done
echo "module_graph: $private includes of another module's private header do not compile"

# The issue's own example: a body file including an eval header.
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
{ echo '#include "eval/eval.h"'; cat "$src/src/body/body.c"; } > "$tmp/body.c"
if $cc $flags -I"$modules/body" -I"$src/src/body" -c "$tmp/body.c" -o "$tmp/body.o" \
        2> "$tmp/err"; then
    echo "FAIL: src/body/body.c compiles with #include \"eval/eval.h\" added"; fail=1
elif ! grep -q 'eval/eval.h' "$tmp/err"; then
    echo "FAIL: body.c with an eval include failed for another reason:"; cat "$tmp/err"; fail=1
else
    echo "module_graph: body.c with #include \"eval/eval.h\" is refused: $(grep -m1 'eval/eval.h' "$tmp/err")"
fi
if ! $cc $flags -I"$modules/body" -I"$src/src/body" -c "$src/src/body/body.c" \
        -o "$tmp/body.o" 2> "$tmp/err"; then
    echo "FAIL: src/body/body.c does not compile with the body module's includes:"
    cat "$tmp/err"; fail=1
fi

# Every folder of src/ is a module; no include climbs out of its folder.
for dir in "$src"/src/*/; do
    dir=${dir%/}
    grep -q "|$dir|" "$graph" || { echo "FAIL: $dir is not a declared module"; fail=1; }
done
if grep -rnE '#include "\.\./' "$src/src"; then
    echo "FAIL: an include reaches around the graph with ../"; fail=1
fi
exit $fail
