#!/bin/bash
# run variants in parallel on the device
cd "$(dirname "$0")/.."
nvidia-smi -L; python3 -c "import torch, transformers; print(torch.__version__, transformers.__version__, torch.cuda.is_available())"
export PYTHONUNBUFFERED=1
i=0
COH=0.8 python3 probe/probe.py h80c30 0.3 > $OUT/a.log 2>&1 &
COH=0.95 python3 probe/probe.py h95c30 0.3 > $OUT/b.log 2>&1 &
COH=0.8 python3 probe/probe.py h80c00 0.0 > $OUT/c.log 2>&1 &
COH=0.8 FREEZE=1 python3 probe/probe.py h80c30F 0.3 > $OUT/d.log 2>&1 &
COH=0.95 python3 probe/probe.py h95c50 0.5 > $OUT/e.log 2>&1 &
wait
grep -h RESULT $OUT/*.log
for f in $OUT/*.log; do tail -n 2 $f; done
