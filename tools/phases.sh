#!/bin/sh
# The wall time of each phase of `make test`, printed at its end, so that a slow addition
# shows in review.
#
#   sh tools/phases.sh start               # begin a new record (build/test-phases)
#   sh tools/phases.sh run NAME COMMAND…   # run COMMAND, record NAME and its seconds;
#                                          # exits with COMMAND's status
#   sh tools/phases.sh report              # print the record, and the total
record=build/test-phases
now() { date +%s.%N 2>/dev/null | grep -v N || date +%s; }  # %N is GNU date's

case "$1" in
    start)
        mkdir -p build && : > "$record" ;;
    run)
        name=$2; shift 2
        begin=$(now)
        "$@"; status=$?
        echo "$name $begin $(now) $status" >> "$record"
        exit $status ;;
    report)
        echo "make test, wall time by phase:"
        awk '{ seconds = $3 - $2; total += seconds
               printf "  %-10s %6.0f s%s\n", $1, seconds, ($4 == 0 ? "" : "  (failed)") }
             END { printf "  %-10s %6.0f s\n", "total", total }' "$record" ;;
    *)
        echo "usage: sh tools/phases.sh start | run NAME COMMAND... | report" >&2; exit 2 ;;
esac
