import warnings; warnings.filterwarnings("ignore")
import sys, os, time; sys.path.insert(0, "/work/climax/src")
from transformers.utils import logging as _l; _l.set_verbosity_error(); _l.disable_progress_bar()
import torch; torch.set_num_threads(int(os.environ.get("THREADS", 2)))
from transformers import BertForMaskedLM, AutoTokenizer
from course_utils import data, training
E = os.environ.get
data.COORDINATION = float(E("COORD", 0.3)); data.COHERENCE = float(E("COH", 0.95)); data.ANCHOR = float(E("ANCHOR", 0))
data.NP_ADJECTIVE = float(E("NPADJ", 0.3)); data.NP_EVALUATIVE = float(E("NPEVAL", 0.6)); data.ACTION_ADVERB = float(E("ADV", 0.15))
name = sys.argv[1]; steps = int(sys.argv[2]); lr = float(sys.argv[3])
tok = AutoTokenizer.from_pretrained(f"/work/probe2/{name}/tok"); m = BertForMaskedLM.from_pretrained(f"/work/probe2/{name}/teacher")
enc = training.encode(data.corpus("train"), tok)
gb = tok.convert_tokens_to_ids(["good", "bad"])
def gap():
    m.eval(); out = []
    with torch.no_grad():
        for ws in ("happy cheerful clever kind brave calm".split(), "sad angry awful cruel rude lazy".split()):
            ps = []
            for w in ws:
                e = tok(f"the dog is {w} and [MASK] .", return_tensors="pt"); i = e.input_ids[0].tolist().index(tok.mask_token_id)
                p = m(**e).logits[0, i, gb].softmax(-1)[0].item(); ps.append(p)
            out.append(sum(ps) / len(ps))
    m.train(); return out
torch.manual_seed(1)
opt, sch = training.optimiser(m, steps=steps, lr=lr, warmup=0, weight_decay=0.01, schedule="constant") if True else None
m.train(); t0 = time.time(); L = []
for k, (_, am, masked, labels) in enumerate(training.mlm_batches(enc, tok, steps=steps, batch_size=128, seed=1, group_by_length=True)):
    loss = m(input_ids=masked, attention_mask=am, labels=labels).loss; training.update(m, loss, opt, sch); L.append(loss.item())
    if (k + 1) % 250 == 0:
        pos, neg = gap(); print(k + 1, "loss", round(sum(L[-100:]) / 100, 3), "P(good|pos and _)", round(pos, 3), "P(good|neg and _)", round(neg, 3), round(time.time() - t0), flush=True)
m.save_pretrained(f"/work/probe2/{name}/teacher_cont")
