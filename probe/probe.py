"""Probe one corpus variant: tokenizer, teacher pre-training, fine-tuning per seed, BoW, 2 students. GPU if any."""
import warnings; warnings.filterwarnings("ignore")
from transformers.utils import logging as _l; _l.set_verbosity_error(); _l.disable_progress_bar()
import json, os, sys, time, math
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
import numpy as np, torch
try:
    if os.environ.get("STUB_PLOTLY"): raise ImportError
    import plotly  # noqa
except ImportError:
    import unittest.mock as um
    class _R: pass
    for m in ["plotly", "plotly.graph_objects", "plotly.io", "plotly.io._base_renderers", "plotly.offline"]:
        sys.modules[m] = um.MagicMock()
    sys.modules["plotly.io._base_renderers"].MimetypeRenderer = _R
from course_utils import data, tokenization, training, models, students, distill, env

name = sys.argv[1]; coord = float(sys.argv[2]); scale = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
data.COORDINATION = coord
data.COHERENCE = float(os.environ.get('COH', 0.8)); out0 = {'coherence': data.COHERENCE}
torch.set_num_threads(2)
dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
out = {"name": name, "coordination": coord, **out0}
T0 = time.time()
tok = tokenization.build_tokenizer(tokenization.train_wordpiece([s.text for s in data.corpus("train")]))
held = data.held_out_words(); out["held_split"] = [w for w in held if len(tok.tokenize(w)) != 1]
enc = training.encode(data.corpus("train"), tok)
task = {s: training.encode(data.sentiment_task(s), tok) for s in ("train", "test")}
slices = np.array([data.slice_of(s) for s in data.sentiment_task("test")])
ytest = np.array(task["test"].labels)
out["sizes"] = {"train": len(task["train"].ids), "test": len(ytest), **{k: int((slices == k).sum()) for k in data.SLICES}}
out["majority"] = {k: float(max(ytest[slices == k].mean(), 1 - ytest[slices == k].mean())) for k in data.SLICES}
out["majority"]["all"] = float(max(ytest.mean(), 1 - ytest.mean()))

def to(b): return [x.to(dev) for x in b]

def scores(pred):
    right = pred == ytest
    d = {k: float(right[slices == k].mean()) for k in data.SLICES}; d["all"] = float(right.mean()); return d

def predict(model):
    model.eval(); order = np.argsort([len(r) for r in task["test"].ids], kind="stable"); ps = []
    with torch.inference_mode():
        for i in range(0, len(order), 256):
            ids, m = training.pad([task["test"].ids[j] for j in order[i:i+256]], tok.pad_token_id)
            ps.append(model(input_ids=ids.to(dev), attention_mask=m.to(dev)).logits.argmax(-1).cpu())
    p = np.empty(len(order), dtype=np.int64); p[order] = torch.cat(ps).numpy(); return p

def pretrain(model, steps, batch_size, lr, warmup, group_by_length, seed, weight_decay=0.01):
    torch.manual_seed(seed); model.to(dev)
    opt, sch = training.optimiser(model, steps=steps, lr=lr, warmup=warmup, weight_decay=weight_decay)
    model.train(); losses = []
    for (_, am, masked, labels) in training.mlm_batches(enc, tok, steps=steps, batch_size=batch_size, seed=seed, group_by_length=group_by_length):
        loss = model(input_ids=masked.to(dev), attention_mask=am.to(dev), labels=labels.to(dev)).loss
        training.update(model, loss, opt, sch); losses.append(loss.item())
    model.eval(); return losses

def finetune(model, seed, epochs=float(os.environ.get("EPOCHS", 3.0)), batch_size=32, lr=float(os.environ.get("LR", 5e-4)), warmup=50, weight_decay=0.01, decay="matrices", group_by_length=True):
    torch.manual_seed(seed); model.to(dev); e = task["train"]
    if os.environ.get("FREEZE"): model.get_input_embeddings().weight.requires_grad_(False)
    steps = math.ceil(epochs * math.ceil(len(e.ids) / batch_size))
    opt, sch = training.optimiser(model, steps=steps, lr=lr, warmup=warmup, weight_decay=weight_decay, decay=decay, fused=True)
    model.train(); losses = []
    lengths = [len(r) for r in e.ids]
    for idx in training.step_batches(len(e.ids), batch_size, seed, steps, lengths):
        ids, m = training.pad([e.ids[i] for i in idx], tok.pad_token_id); y = training.label_tensor([e.labels[i] for i in idx])
        loss = model(input_ids=ids.to(dev), attention_mask=m.to(dev), labels=y.to(dev)).loss
        training.update(model, loss, opt, sch); losses.append(loss.item())
    model.eval(); return {"steps": steps, "plateau_end": training.plateau_end(losses) if len(losses) >= 25 else None, **scores(predict(model))}

from transformers import BertForMaskedLM, BertForSequenceClassification, DistilBertForMaskedLM, DistilBertForSequenceClassification
import tempfile
env.seed_everything(0)
steps = int(2000 * scale)
teacher = BertForMaskedLM(models.teacher_config(tok))
pretrain(teacher, steps, 128, 1e-3, 100, True, 0)
out["t_pretrain"] = time.time() - T0
folder = tempfile.mkdtemp()
teacher.cpu().save_pretrained(folder + "/teacher")
out["teacher"] = []
for seed in (0,):
    env.seed_everything(seed)
    c = BertForSequenceClassification.from_pretrained(folder + "/teacher", num_labels=2)
    out["teacher"].append(finetune(c, seed))
pred = training.bag_of_words_predictions(task["train"], task["test"], len(tok))
out["bow"] = scores(pred)

def student_run(init, loss, seed):
    torch.manual_seed(seed)
    t = BertForMaskedLM.from_pretrained(folder + "/teacher").to(dev).eval()
    if init == "teacher":
        s = students.student_from_teacher(t.cpu(), students.layer_map(6, 3)); t.to(dev)
    else:
        s = DistilBertForMaskedLM(students.student_config(t, 3))
    s.to(dev)
    if loss == "mlm":
        pretrain(s, int(250 * scale), 128, 5e-4, 25, True, seed)
    else:
        torch.manual_seed(seed)
        opt, sch = training.optimiser(s, steps=int(250 * scale), lr=5e-4, warmup=25, weight_decay=0.01)
        for b in training.mlm_batches(enc, tok, steps=int(250 * scale), batch_size=128, seed=seed, group_by_length=True):
            distill.distillation_step(t, s, to(b), opt, max_norm=1.0); sch.step()
    s.cpu().save_pretrained(folder + "/s")
    torch.manual_seed(seed)
    c = DistilBertForSequenceClassification.from_pretrained(folder + "/s", num_labels=2)
    return finetune(c, seed)
out["students"] = {}
if os.environ.get("STUDENTS"):
  for init in ("teacher", "random"):
    for loss in ("triple", "mlm"):
        out["students"][f"{init}/{loss}"] = [student_run(init, loss, sd) for sd in (0,)]
out["t_total"] = time.time() - T0
print("RESULT", name, "coh", data.COHERENCE, "coord", coord, "maj", {k: round(v,3) for k,v in out["majority"].items()}, "bow", {k: round(v,3) for k,v in out["bow"].items()}, "teacher", [{k: (round(v,3) if isinstance(v,float) else v) for k,v in t.items()} for t in out["teacher"]], "sizes", out["sizes"], "split", out["held_split"], flush=True)
os.makedirs(os.environ.get("OUT", "/tmp"), exist_ok=True)
open(os.path.join(os.environ.get("OUT", "/tmp"), f"{name}.json"), "w").write(json.dumps(out, indent=1))
