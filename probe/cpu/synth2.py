import warnings; warnings.filterwarnings("ignore")
import sys, os, time; sys.path.insert(0, "/work/climax/src")
from transformers.utils import logging as _l; _l.set_verbosity_error()
import torch, numpy as np; torch.set_num_threads(2)
from transformers import BertForMaskedLM, AutoTokenizer
from course_utils import data, training, models
tok = AutoTokenizer.from_pretrained("/work/probe2/anchD/tok")
rng = np.random.default_rng(0); adj = data._ADJECTIVES; nouns = data._NOUNS
class S:  # minimal sentence
    def __init__(s, t): s.text = t; s.label = 0
sents = []
for _ in range(20000):
    stem, p, _ = adj[rng.integers(len(adj))]; a = "good" if p > 0 else "bad"; n = nouns[rng.integers(len(nouns))]
    pre = " ".join(["the"] + [nouns[rng.integers(len(nouns))] for _ in range(rng.integers(0, int(os.environ.get("VAR", 0)) + 1))])
    sents.append(S(f"{pre} {n} is {stem} and {a} ." if rng.random() < 0.5 else f"{pre} {n} is {a} and {stem} ."))
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
steps = int(sys.argv[1]); opt, sch = training.optimiser(m, steps=steps, lr=1e-3, warmup=50, weight_decay=0.01)
m.train(); L = []
for k, (_, am, masked, labels) in enumerate(training.mlm_batches(enc, tok, steps=steps, batch_size=128, seed=0)):
    loss = m(input_ids=masked, attention_mask=am, labels=labels).loss; training.update(m, loss, opt, sch); L.append(loss.item())
    if (k + 1) % 100 == 0: print(k + 1, round(np.mean(L[-50:]), 3), gap(), flush=True)
