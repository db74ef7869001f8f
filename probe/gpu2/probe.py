"""One grammar variant end to end on a GPU (CPU if none): tokenizer, teacher pre-training, what the
pre-trained teacher knows of polarity, fine-tuning over seeds, bag of words. Knobs from the environment.

env: COORD COH NPADJ NPEVAL ADV ANCHOR CREATURES PROSODY PT_STEPS PT_LR SEEDS FT_STEPS_SCALE
"""
import warnings; warnings.filterwarnings("ignore")
from transformers.utils import logging as _l; _l.set_verbosity_error(); _l.disable_progress_bar()
import json, os, sys, time, math
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src"))
import numpy as np, torch
try:
    import plotly  # noqa
except ImportError:
    import unittest.mock as um
    class _R: pass
    for m in ["plotly", "plotly.graph_objects", "plotly.io", "plotly.io._base_renderers", "plotly.offline", "plotly.subplots"]:
        sys.modules[m] = um.MagicMock()
    sys.modules["plotly.io._base_renderers"].MimetypeRenderer = _R
torch.set_num_threads(int(os.environ.get("THREADS", 1)))
from course_utils import data, tokenization, training, models, env
E = os.environ.get
for knob, key in (("COORDINATION", "COORD"), ("COHERENCE", "COH"), ("NP_ADJECTIVE", "NPADJ"), ("NP_EVALUATIVE", "NPEVAL"),
                  ("ACTION_ADVERB", "ADV"), ("PROSODY", "PROSODY")):
    if E(key): setattr(data, knob, float(E(key)))  # else data.py's default
if E("POOL"): data.TASK_POOL["test"] = int(E("POOL"))
dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
name = sys.argv[1]; OUT = E("OUT", "/tmp")
out = {"name": name, "env": {k: E(k) for k in "COORD COH NPADJ NPEVAL ADV PROSODY POOL PT_STEPS PT_LR SEEDS STUDENTS".split()},
       "knobs": {k: getattr(data, k) for k in ("COORDINATION", "COHERENCE", "NP_ADJECTIVE", "NP_EVALUATIVE", "ACTION_ADVERB", "PROSODY", "TASK_POOL")}}
T0 = time.time()
train = data.corpus("train")
tok = tokenization.build_tokenizer(tokenization.train_wordpiece([s.text for s in train]))
held = data.held_out_words(); out["held_split"] = sorted(w for w in held if len(tok.tokenize(w)) != 1)
enc = training.encode(train, tok)
task = {s: training.encode(data.sentiment_task(s), tok) for s in ("train", "test")}
slices = np.array([data.slice_of(s) for s in data.sentiment_task("test")]); ytest = np.array(task["test"].labels)
out["sizes"] = {"train": len(task["train"].ids), "test": len(ytest), **{k: int((slices == k).sum()) for k in data.SLICES}}
out["majority"] = {k: round(float(max(ytest[slices == k].mean(), 1 - ytest[slices == k].mean())), 3) for k in data.SLICES}
hv = {f for v in data.HELD_OUT_VERBS for f in data._verb_forms(v)}
verbish = np.array([any(w in hv for w in s.words) for s in data.sentiment_task("test")]); uadj = (slices == "unseen") & ~verbish
out["sizes"]["unseen_adj"] = int(uadj.sum()); out["majority"]["unseen_adj"] = round(float(max(ytest[uadj].mean(), 1 - ytest[uadj].mean())), 3)
out["majority"]["all"] = round(float(max(ytest.mean(), 1 - ytest.mean())), 3)
sw = data.sentiment_words(); out["sw_per_sentence"] = round(float(np.mean([sum(w in sw for w in s.words) for s in train])), 2)
def scores(pred):
    right = pred == ytest; d = {k: round(float(right[slices == k].mean()), 3) for k in data.SLICES}; d["all"] = round(float(right.mean()), 3); d["unseen_adj"] = round(float(right[uadj].mean()), 3); return d
out["bow"] = scores(training.bag_of_words_predictions(task["train"], task["test"], len(tok)))
out["t_setup"] = round(time.time() - T0)
print("setup", name, out["sizes"], out["majority"], "bow", out["bow"], "split", out["held_split"], out["t_setup"], "s", flush=True)
from transformers import BertForMaskedLM, BertForSequenceClassification
# polarity of word forms
pol = {}
for stem, p, un in data._ADJECTIVES:
    pol[stem] = p; pol[data.adverb(stem)] = p; pol[data.noun_of_quality(stem)] = p
    if un: pol["un" + stem] = -p
for v, p in data._OPINION_VERBS:
    for f in data._verb_forms(v): pol[f] = p
forms = [w for w in sorted(pol) if len(tok.tokenize(w)) == 1]
y = np.array([pol[w] > 0 for w in forms]); isheld = np.array([w in held for w in forms])
def fit_predict(X, Xtr, ytr, Xte):
    Xt = torch.tensor(Xtr); yt = torch.tensor(ytr).float(); mu, sd = Xt.mean(0), Xt.std(0) + 1e-6
    w = torch.zeros(X.shape[1], requires_grad=True); b = torch.zeros(1, requires_grad=True)
    o = torch.optim.Adam([w, b], lr=0.01, weight_decay=1e-3)
    for _ in range(300):
        l = torch.nn.functional.binary_cross_entropy_with_logits(((Xt - mu) / sd) @ w + b, yt); o.zero_grad(); l.backward(); o.step()
    return ((((torch.tensor(Xte) - mu) / sd) @ w + b) > 0).numpy()
GROUPS = (("pos_seen", "happy cheerful clever bright"), ("neg_seen", "sad angry awful foolish"), ("pos_held", "kind brave calm polite"), ("neg_held", "cruel rude lazy greedy"))
def knowledge(model):
    """What the masked LM knows of polarity: probe on embeddings (fit seen, test held out); P(good) after 'X and';
    P(perfectly) before X."""
    model.eval(); r = {}
    ids = torch.tensor(tok.convert_tokens_to_ids(forms))
    X = model.get_input_embeddings().weight[ids.to(dev)].detach().cpu().float().numpy()
    r["probe_held"] = round(float((fit_predict(X, X[~isheld], y[~isheld], X[isheld]) == y[isheld]).mean()), 3)
    with torch.inference_mode():
        for key, template, pair in (("p_good", "the dog is {} and [MASK] .", ["good", "bad"]), ("p_perfectly", "the dog is [MASK] {} .", ["perfectly", "utterly"])):
            if any(len(tok.tokenize(w)) != 1 for w in pair): continue
            gb = tok.convert_tokens_to_ids(pair); g = {}
            for group, ws in GROUPS:
                ps = []
                for w in ws.split():
                    e = tok(template.format(w), return_tensors="pt"); i = e.input_ids[0].tolist().index(tok.mask_token_id)
                    ps.append(model(**{k: v.to(dev) for k, v in e.items()}).logits[0, i, gb].softmax(-1)[0].item())
                g[group] = round(float(np.mean(ps)), 3)
            r[key] = g
    model.train(); return r
holdp = round(float(max(y[isheld].mean(), 1 - y[isheld].mean())), 3); out["probe_held_majority"] = holdp
env.seed_everything(0)
teacher = BertForMaskedLM(models.teacher_config(tok)).to(dev)
steps = int(E("PT_STEPS", 2000)); torch.manual_seed(0)
opt, sch = training.optimiser(teacher, steps=steps, lr=float(E("PT_LR", 1e-3)), warmup=100, weight_decay=0.01)
teacher.train(); losses = []; out["curve"] = []
for k, (_, am, masked, labels) in enumerate(training.mlm_batches(enc, tok, steps=steps, batch_size=128, seed=0, group_by_length=True)):
    loss = teacher(input_ids=masked.to(dev), attention_mask=am.to(dev), labels=labels.to(dev)).loss
    training.update(teacher, loss, opt, sch); losses.append(loss.item())
    if (k + 1) % 500 == 0 and k + 1 < steps:
        out["curve"].append({"step": k + 1, "mlm": round(float(np.mean(losses[-100:])), 3), **knowledge(teacher)})
out["pretrained"] = {"mlm": round(float(np.mean(losses[-100:])), 3), **knowledge(teacher)}
out["t_pretrain"] = round(time.time() - T0)
print("pretrained", name, out["pretrained"], "maj", holdp, out["t_pretrain"], "s", flush=True)
folder = f"/tmp/gpu2_{name}"; os.makedirs(folder, exist_ok=True); teacher.cpu().save_pretrained(folder + "/teacher")
def finetune(seed, lr=5e-4, epochs=3.0, batch_size=32, warmup=50, path=None, cls=BertForSequenceClassification):
    env.seed_everything(seed); c = cls.from_pretrained(path or folder + "/teacher", num_labels=2).to(dev)
    e = task["train"]; st = math.ceil(epochs * math.ceil(len(e.ids) / batch_size))
    opt, sch = training.optimiser(c, steps=st, lr=lr, warmup=warmup, weight_decay=0.01, decay="matrices")
    c.train(); fl = []
    for idx in training.step_batches(len(e.ids), batch_size, seed, st, [len(r) for r in e.ids]):
        ids_, m = training.pad([e.ids[i] for i in idx], tok.pad_token_id)
        loss = c(input_ids=ids_.to(dev), attention_mask=m.to(dev), labels=training.label_tensor([e.labels[i] for i in idx]).to(dev)).loss
        training.update(c, loss, opt, sch); fl.append(loss.item())
    c.eval(); order = np.argsort([len(r) for r in task["test"].ids], kind="stable"); ps = []
    with torch.inference_mode():
        for i in range(0, len(order), 256):
            ids_, m = training.pad([task["test"].ids[j] for j in order[i:i + 256]], tok.pad_token_id)
            ps.append(c(input_ids=ids_.to(dev), attention_mask=m.to(dev)).logits.argmax(-1).cpu())
    p = np.empty(len(order), dtype=np.int64); p[order] = torch.cat(ps).numpy()
    return {"seed": seed, "steps": st, "plateau_end": training.plateau_end(fl) if len(fl) >= 25 else None, **scores(p)}
out["teacher"] = [finetune(s) for s in range(int(E("SEEDS", 3)))]
KEYS = (*data.SLICES, "all", "unseen_adj")
out["teacher_mean"] = {k: round(float(np.mean([t[k] for t in out["teacher"]])), 3) for k in KEYS} if out["teacher"] else {}
from transformers import DistilBertForMaskedLM, DistilBertForSequenceClassification
from course_utils import distill, students
out["students"] = {}
for run in [r for r in E("STUDENTS", "").split(",") if r]:
    run = {"D": "distilled", "TM": "teacher layers, MLM only", "RT": "random initialisation, triple loss", "RM": "no distillation (MLM only)"}[run]
    init, alphas = models.STUDENT_RUNS[run]; res = []
    for seed in range(int(E("STUDENT_SEEDS", 2))):
        t = BertForMaskedLM.from_pretrained(folder + "/teacher").eval(); torch.manual_seed(seed)
        st = students.student_from_teacher(t, students.layer_map(6, models.STUDENT_LAYERS)) if init == "teacher layers" else DistilBertForMaskedLM(students.student_config(t, models.STUDENT_LAYERS))
        t.to(dev); st.to(dev); d = models.DISTILLATION
        opt, sch = training.optimiser(st, steps=d["steps"], lr=d["lr"], warmup=d["warmup"], weight_decay=0.01); st.train()
        for b in training.mlm_batches(enc, tok, steps=d["steps"], batch_size=d["batch_size"], seed=seed, group_by_length=True):
            b = [x.to(dev) for x in b]
            if alphas.get("ce") == 0.0 and alphas.get("cos") == 0.0:
                loss = st(input_ids=b[2], attention_mask=b[1], labels=b[3]).loss; training.update(st, loss, opt, sch)
            else:
                distill.distillation_step(t, st, b, opt, alphas=alphas, max_norm=1.0); sch.step()
        st.cpu().save_pretrained(folder + "/s")
        res.append(finetune(seed, path=folder + "/s", cls=DistilBertForSequenceClassification))
        print("student", name, run, res[-1], flush=True)
    out["students"][run] = {"runs": res, "mean": {k: round(float(np.mean([r[k] for r in res])), 3) for k in KEYS}}
out["t_total"] = round(time.time() - T0)
print("RESULT", name, "maj", out["majority"], "bow", out["bow"], "pre", out["pretrained"], "teacher", out["teacher_mean"],
      [t["unseen"] for t in out["teacher"]], "students", {k: v["mean"] for k, v in out["students"].items()}, "plateau", [t["plateau_end"] for t in out["teacher"]], "sizes", out["sizes"], out["t_total"], "s", flush=True)
json.dump(out, open(os.path.join(OUT, f"{name}.json"), "w"), indent=1)
