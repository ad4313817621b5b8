#!/bin/sh
# The files of src/xr call each other one way (src/xr/oxr_internal.h): a file calls only
# files below it in this order. Reads who defines and who uses each oxr_* function from
# the static library's symbol table and fails, naming the call, on any call upward or
# sideways between files of the same rank.
#   calls_one_way.sh LIBEMBODY_XR.a
set -eu
lib="$1"
nm -A "$lib" | awk '
BEGIN {
    split("oxr_source oxr_frame oxr_session oxr_instance oxr_actions oxr_trackers oxr_hands oxr_view oxr_common oxr_result", order, " ")
    rank["oxr_source"] = 7; rank["oxr_frame"] = 6; rank["oxr_session"] = 5; rank["oxr_instance"] = 4
    rank["oxr_actions"] = 3; rank["oxr_trackers"] = 3; rank["oxr_hands"] = 3; rank["oxr_view"] = 3
    rank["oxr_common"] = 1; rank["oxr_result"] = 1
}
{
    # "lib.a:oxr_frame.c.o:0000000000000000 T oxr_frame_next" or "...:                 U oxr_pose_convert"
    n = split($1, part, ":"); file = part[2]; sub(/\.c\.o$/, "", file)
    sym = $NF; type = $(NF - 1)
    if (sym !~ /^oxr_/) next
    if (type == "T") defined[sym] = file
    else if (type == "U") { used[++count] = sym; user[count] = file }
}
END {
    bad = 0
    for (i = 1; i <= count; ++i) {
        to = defined[used[i]]; from = user[i]
        if (to == "" || to == from) continue
        if (!(from in rank) || !(to in rank)) { print "unknown file: " from " or " to; bad = 1; continue }
        if (rank[from] <= rank[to]) { print from ".c calls " used[i] " of " to ".c: upward or sideways"; bad = 1 }
    }
    if (bad) exit 1
    print "src/xr: every call runs one way"
}'
