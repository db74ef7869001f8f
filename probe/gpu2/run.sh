#!/bin/bash
# Variants side by side on the device; results gathered into $OUT before LIMIT seconds.
cd "$(dirname "$0")"
LIMIT=${LIMIT:-470}
export PYTHONUNBUFFERED=1 OUT=/tmp/res THREADS=1; mkdir -p $OUT
nvidia-smi -L; python3 -c "import torch, transformers, tokenizers; print(torch.__version__, transformers.__version__, tokenizers.__version__, torch.cuda.is_available())"
start=$SECONDS
v() { local n=$1; shift; env "$@" python3 probe.py $n > /tmp/res/$n.log 2>&1 & }
v P5      PROSODY=0.5
v P8      PROSODY=0.8
v P5c     PROSODY=0.5 CREATURES=0.1
v P5aF    PROSODY=0.5 ANCHOR=1.0 COORD=0.8
v P5L     PROSODY=0.5 PT_STEPS=4000
v F       ANCHOR=1.0 COORD=0.8
v Fc0     ANCHOR=1.0 COORD=0.8 CREATURES=0.0
v P5lr    PROSODY=0.5 PT_LR=2e-3
v P8c0    PROSODY=0.8 CREATURES=0.0
v P5d     PROSODY=0.5 COH=1.0 NPADJ=0.5 NPEVAL=0.8 ADV=0.3
while [ -n "$(jobs -r)" ] && [ $((SECONDS - start)) -lt $LIMIT ]; do sleep 5; done
echo "elapsed $((SECONDS - start)) s; still running: $(jobs -r | wc -l)"
cd /tmp/res && tar czf $ODIR/res.tgz . && grep -h "RESULT\|pretrained\|Error\|error" *.log | cut -c1-900
