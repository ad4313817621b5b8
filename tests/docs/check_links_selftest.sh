#!/bin/sh
# check_links.sh must notice a broken link: a missing file, a missing heading, and a
# missing heading in a file reached only through another; and pass good ones.
#   tests/docs/check_links_selftest.sh tests/docs/check_links.sh
set -eu
check=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/docs"
printf '# Top\n\nSee [b](docs/b.md#the-part-two) and [top](#top) and ![pic](docs/pic.png).\n' >"$dir/README.md"
printf '# B\n\n## The part: two\n\n[c](c.md)\n' >"$dir/docs/b.md"
printf '# C\n\n[back](../README.md#top)\n' >"$dir/docs/c.md"
: >"$dir/docs/pic.png"
sh "$check" "$dir" README.md >/dev/null || { echo "selftest: good links were refused" >&2; exit 1; }
for broken in 'docs/nothere.md' 'docs/b.md#no-such-part' 'docs/pic.png#x'; do
    printf '# Top\n\n[x](%s)\n' "$broken" >"$dir/README.md"
    if sh "$check" "$dir" README.md >/dev/null; then
        echo "selftest: the broken link $broken was not noticed" >&2
        exit 1
    fi
done
printf '# Top\n\n[b](docs/b.md)\n' >"$dir/README.md"
printf '# C\n\n[back](../README.md#nowhere)\n' >"$dir/docs/c.md"
if sh "$check" "$dir" README.md >/dev/null; then
    echo "selftest: a broken link two files away was not noticed" >&2
    exit 1
fi
echo "selftest: broken links are noticed"
