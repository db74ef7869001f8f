import warnings; warnings.filterwarnings("ignore")
import sys, os, time; sys.path.insert(0, "/work/climax/src")
from transformers.utils import logging as _l; _l.set_verbosity_error()
import torch, numpy as np; torch.set_num_threads(2)
from transformers import BertForMaskedLM, AutoTokenizer
from course_utils import data, training, models
data.COORDINATION = 0.8; data.ANCHOR = 1.0; data.COHERENCE = 0.95
tok = AutoTokenizer.from_pretrained("/work/probe2/anchF/tok")
corp = data.corpus("train"); frac = float(sys.argv[2])
anch = [s for s in corp if "good" in s.words or "bad" in s.words]; other = [s for s in corp if not ("good" in s.words or "bad" in s.words)]
print(len(anch), len(other), tok.tokenize("The dog is happy"))
rng = np.random.default_rng(0)
sents = anch + [other[i] for i in rng.permutation(len(other))[: int(len(anch) * frac)]]
enc = training.encode(sents, tok)
torch.manual_seed(0); m = BertForMaskedLM(models.teacher_config(tok))
gb = tok.convert_tokens_to_ids(["good", "bad"])
def gap():
    m.eval(); out = []
    with torch.no_grad():
        for ws in ("happy cheerful clever kind brave calm".split(), "sad angry awful cruel rude lazy".split()):
            ps = []
            for w in ws:
                e = tok(f"the dog is {w} and [MASK] .", return_tensors="pt"); i = e.input_ids[0].tolist().index(tok.mask_token_id)
                ps.append(m(**e).logits[0, i, gb].softmax(-1)[0].item())
            out.append(round(sum(ps) / len(ps), 3))
    m.train(); return out
steps = int(sys.argv[1]); opt, sch = training.optimiser(m, steps=steps, lr=1e-3, warmup=100, weight_decay=0.01)
m.train(); L = []
for k, (_, am, masked, labels) in enumerate(training.mlm_batches(enc, tok, steps=steps, batch_size=128, seed=0, group_by_length=True)):
    loss = m(input_ids=masked, attention_mask=am, labels=labels).loss; training.update(m, loss, opt, sch); L.append(loss.item())
    if (k + 1) % 100 == 0: print(k + 1, round(np.mean(L[-50:]), 3), gap(), flush=True)
