"""CPU probe of one grammar variant: does pre-training put polarity into held-out words? Then fine-tune once.

env: COORD COH NPADJ NPEVAL ADV STEPS FT(0/1) LR EMB_LR_SCALE THREADS
"""
import warnings; warnings.filterwarnings("ignore")
import json, os, sys, time, math
sys.path.insert(0, "/work/climax/src")
from transformers.utils import logging as _l; _l.set_verbosity_error(); _l.disable_progress_bar()
import numpy as np, torch
torch.set_num_threads(int(os.environ.get("THREADS", 1)))
from course_utils import data, tokenization, training, models, env
E = os.environ.get
data.COORDINATION = float(E("COORD", 0.3)); data.COHERENCE = float(E("COH", 0.95))
data.NP_ADJECTIVE = float(E("NPADJ", 0.3)); data.NP_EVALUATIVE = float(E("NPEVAL", 0.6)); data.ACTION_ADVERB = float(E("ADV", 0.15)); data.ANCHOR = float(E("ANCHOR", 0.0))
name = sys.argv[1]; out = {"name": name, "env": {k: E(k) for k in "COORD COH NPADJ NPEVAL ADV ANCHOR STEPS LR EMB_LR_SCALE".split()}}
T0 = time.time()
train = data.corpus("train")
tok = tokenization.build_tokenizer(tokenization.train_wordpiece([s.text for s in train]))
held = data.held_out_words(); out["held_split"] = [w for w in held if len(tok.tokenize(w)) != 1]
enc = training.encode(train, tok)
task = {s: training.encode(data.sentiment_task(s), tok) for s in ("train", "test")}
slices = np.array([data.slice_of(s) for s in data.sentiment_task("test")]); ytest = np.array(task["test"].labels)
out["sizes"] = {"train": len(task["train"].ids), "test": len(ytest), **{k: int((slices == k).sum()) for k in data.SLICES}}
out["majority"] = {k: float(max(ytest[slices == k].mean(), 1 - ytest[slices == k].mean())) for k in data.SLICES}
# sentiment words per sentence in the corpus
sw = data.sentiment_words(); out["sw_per_sentence"] = float(np.mean([sum(w in sw for w in s.words) for s in train]))
def scores(pred):
    right = pred == ytest; d = {k: round(float(right[slices == k].mean()), 3) for k in data.SLICES}; d["all"] = round(float(right.mean()), 3); return d
out["bow"] = scores(training.bag_of_words_predictions(task["train"], task["test"], len(tok)))
print("setup", name, out["sizes"], out["majority"], "bow", out["bow"], "sw/sent", round(out["sw_per_sentence"], 2), "split", out["held_split"], flush=True)
from transformers import BertForMaskedLM, BertForSequenceClassification
env.seed_everything(0)
teacher = BertForMaskedLM(models.teacher_config(tok))
steps = int(E("STEPS", 2000)); torch.manual_seed(0)
opt, sch = training.optimiser(teacher, steps=steps, lr=1e-3, warmup=100, weight_decay=0.01)
teacher.train(); losses = []
for (_, am, masked, labels) in training.mlm_batches(enc, tok, steps=steps, batch_size=128, seed=0, group_by_length=True):
    loss = teacher(input_ids=masked, attention_mask=am, labels=labels).loss
    training.update(teacher, loss, opt, sch); losses.append(loss.item())
teacher.eval(); out["mlm_loss_end"] = float(np.mean(losses[-50:])); out["t_pretrain"] = time.time() - T0
# polarity of word forms
pol = {}
for stem, p, un in data._ADJECTIVES:
    pol[stem] = p; pol[data.adverb(stem)] = p; pol[data.noun_of_quality(stem)] = p
    if un: pol["un" + stem] = -p
for v, p in data._OPINION_VERBS:
    for f in data._verb_forms(v): pol[f] = p
pol["good"], pol["bad"] = 1, -1
forms = [w for w in sorted(pol) if len(tok.tokenize(w)) == 1]
ids = torch.tensor(tok.convert_tokens_to_ids(forms)); X = teacher.get_input_embeddings().weight[ids].detach().numpy()
y = np.array([pol[w] > 0 for w in forms]); isheld = np.array([w in held for w in forms])
def fit_predict(Xtr, ytr, Xte):
    Xt = torch.tensor(Xtr); yt = torch.tensor(ytr).float(); mu, sd = Xt.mean(0), Xt.std(0) + 1e-6
    w = torch.zeros(X.shape[1], requires_grad=True); b = torch.zeros(1, requires_grad=True)
    o = torch.optim.Adam([w, b], lr=0.01, weight_decay=1e-3)
    for _ in range(300):
        l = torch.nn.functional.binary_cross_entropy_with_logits(((Xt - mu) / sd) @ w + b, yt); o.zero_grad(); l.backward(); o.step()
    return ((((torch.tensor(Xte) - mu) / sd) @ w + b) > 0).numpy()
pr = fit_predict(X[~isheld], y[~isheld], X[isheld]); out["probe_held"] = float((pr == y[isheld]).mean()); out["probe_held_majority"] = float(max(y[isheld].mean(), 1 - y[isheld].mean()))
# masked-word polarity: in validation sentences, mask each sentiment word in turn; does the model's best sentiment form share its polarity?
val = data.corpus("validation")[:600]; sid = torch.tensor(tok.convert_tokens_to_ids(forms)); spol = torch.tensor(y)
hits = {"seen": [], "held": []}
with torch.inference_mode():
    for s in val:
        e = tok(s.text.lower() if False else s.text, return_tensors="pt"); toks = tok.convert_ids_to_tokens(e.input_ids[0])
        for i, t in enumerate(toks):
            if t in pol and t in forms:
                ids2 = e.input_ids.clone(); ids2[0, i] = tok.mask_token_id
                logits = teacher(input_ids=ids2, attention_mask=e.attention_mask).logits[0, i, sid]
                hits["held" if t in held else "seen"].append(bool(spol[logits.argmax()] == (pol[t] > 0)))
out["masked_polarity"] = {k: round(float(np.mean(v)), 3) for k, v in hits.items()}
gb = tok.convert_tokens_to_ids(["good", "bad"]); gaps = {}
with torch.inference_mode():
    for group, ws in (("pos_seen", "happy cheerful clever bright"), ("neg_seen", "sad angry awful foolish"), ("pos_held", "kind brave calm polite"), ("neg_held", "cruel rude lazy greedy")):
        ps = []
        for w in ws.split():
            e = tok(f"the dog is {w} and [MASK] .", return_tensors="pt"); i = e.input_ids[0].tolist().index(tok.mask_token_id)
            ps.append(teacher(**e).logits[0, i, gb].softmax(-1)[0].item())
        gaps[group] = round(float(np.mean(ps)), 3)
out["p_good"] = gaps
print("pretrained", name, "mlm", round(out["mlm_loss_end"], 3), "probe_held", round(out["probe_held"], 3), "maj", round(out["probe_held_majority"], 3), "masked_pol", out["masked_polarity"], "p_good", out["p_good"], "t", round(out["t_pretrain"]), flush=True)
folder = f"/work/probe2/{name}"; os.makedirs(folder, exist_ok=True); teacher.save_pretrained(folder + "/teacher"); tok.save_pretrained(folder + "/tok")
if E("FT", "1") == "1":
    lr = float(E("LR", 5e-4)); scale = float(E("EMB_LR_SCALE", 1.0))
    env.seed_everything(0); c = BertForSequenceClassification.from_pretrained(folder + "/teacher", num_labels=2)
    e = task["train"]; steps = math.ceil(3 * math.ceil(len(e.ids) / 32))
    opt, sch = training.optimiser(c, steps=steps, lr=lr, warmup=50, weight_decay=0.01, decay="matrices")
    if scale != 1.0:
        emb = c.get_input_embeddings().weight
        for g in opt.param_groups:
            if any(p is emb for p in g["params"]):
                g["params"] = [p for p in g["params"] if p is not emb]
        opt.add_param_group({"params": [emb], "lr": lr * scale, "weight_decay": 0.01}); sch.base_lrs.append(lr * scale)
    c.train(); fl = []
    for idx in training.step_batches(len(e.ids), 32, 0, steps, [len(r) for r in e.ids]):
        ids_, m = training.pad([e.ids[i] for i in idx], tok.pad_token_id)
        loss = c(input_ids=ids_, attention_mask=m, labels=training.label_tensor([e.labels[i] for i in idx])).loss
        training.update(c, loss, opt, sch); fl.append(loss.item())
    c.eval(); order = np.argsort([len(r) for r in task["test"].ids], kind="stable"); ps = []
    with torch.inference_mode():
        for i in range(0, len(order), 256):
            ids_, m = training.pad([task["test"].ids[j] for j in order[i:i + 256]], tok.pad_token_id)
            ps.append(c(input_ids=ids_, attention_mask=m).logits.argmax(-1))
    p = np.empty(len(order), dtype=np.int64); p[order] = torch.cat(ps).numpy()
    out["teacher"] = {"steps": steps, "plateau_end": training.plateau_end(fl), **scores(p)}
    print("finetuned", name, out["teacher"], "t", round(time.time() - T0), flush=True)
json.dump(out, open(f"/work/notes/probe2/{name}.json", "w"), indent=1)
