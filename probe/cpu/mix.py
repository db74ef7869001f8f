import warnings; warnings.filterwarnings("ignore")
import sys, os, time; sys.path.insert(0, "/work/climax/src")
from transformers.utils import logging as _l; _l.set_verbosity_error()
import torch, numpy as np; torch.set_num_threads(int(os.environ.get("THREADS", 2)))
from transformers import BertForMaskedLM, AutoTokenizer
from course_utils import data, training, models
data.COORDINATION = 0.8; data.ANCHOR = 1.0; data.COHERENCE = 0.95
tok = AutoTokenizer.from_pretrained("/work/probe2/anchF/tok")
class S:
    def __init__(s, t): s.text = t; s.label = 0
rng = np.random.default_rng(0); extra = []
for _ in range(int(os.environ.get("SHORT", 0))):
    stem, p, _ = data._ADJECTIVES[rng.integers(len(data._ADJECTIVES))]; n = data._NOUNS[rng.integers(len(data._NOUNS))]
    conj = "but" if rng.random() < 0.4 else "and"; a = ("good" if p > 0 else "bad") if conj == "and" else ("bad" if p > 0 else "good")
    extra.append(S(f"the {n} is {stem} {conj} {a} ." if rng.random() < 0.5 else f"the {n} is {a} {conj} {stem} ."))
enc = training.encode(list(data.corpus("train")) + extra, tok)
torch.manual_seed(0); m = BertForMaskedLM(models.teacher_config(tok))
gb = tok.convert_tokens_to_ids(["good", "bad"])
def gap():
    m.eval(); out = []
    with torch.no_grad():
        for ws in ("happy cheerful clever bright".split(), "sad angry awful foolish".split(), "kind brave calm polite".split(), "cruel rude lazy greedy".split()):
            ps = []
            for w in ws:
                e = tok(f"the dog is {w} and [MASK] .", return_tensors="pt"); i = e.input_ids[0].tolist().index(tok.mask_token_id)
                ps.append(m(**e).logits[0, i, gb].softmax(-1)[0].item())
            out.append(round(sum(ps) / len(ps), 3))
    m.train(); return out
steps = int(sys.argv[1]); lr = float(sys.argv[2]); opt, sch = training.optimiser(m, steps=steps, lr=lr, warmup=100, weight_decay=0.01)
m.train(); L = []; t0 = time.time()
for k, (_, am, masked, labels) in enumerate(training.mlm_batches(enc, tok, steps=steps, batch_size=128, seed=0, group_by_length=True)):
    loss = m(input_ids=masked, attention_mask=am, labels=labels).loss; training.update(m, loss, opt, sch); L.append(loss.item())
    if (k + 1) % 250 == 0: print(k + 1, round(np.mean(L[-100:]), 3), "p_good pos_seen neg_seen pos_held neg_held", gap(), round(time.time() - t0), flush=True)
m.save_pretrained(f"/work/probe2/long_{steps}_{lr}")
