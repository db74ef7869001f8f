#!/bin/bash
# The chosen grammar (data.py's defaults) with the 2 x 2 of students, and prosody 0.4 / 0.6 beside it.
cd "$(dirname "$0")"
LIMIT=${LIMIT:-330}
export PYTHONUNBUFFERED=1 OUT=/tmp/res THREADS=1; mkdir -p $OUT
start=$SECONDS
v() { local n=$1; shift; env "$@" python3 probe.py $n > /tmp/res/$n.log 2>&1 & }
v final_T  SEEDS=3
v final_D  SEEDS=0 STUDENTS=D STUDENT_SEEDS=2
v final_TM SEEDS=0 STUDENTS=TM STUDENT_SEEDS=2
v final_RT SEEDS=0 STUDENTS=RT STUDENT_SEEDS=2
v final_RM SEEDS=0 STUDENTS=RM STUDENT_SEEDS=2
v p4       SEEDS=3 PROSODY=0.4
v p6       SEEDS=3 PROSODY=0.6
while [ -n "$(jobs -r)" ] && [ $((SECONDS - start)) -lt $LIMIT ]; do sleep 5; done
echo "elapsed $((SECONDS - start)) s; still running: $(jobs -r | wc -l)"
cd /tmp/res && tar czf $ODIR/res.tgz . && grep -h "RESULT\|pretrained\|student\|Error\|error" *.log | cut -c1-1200
