"""Diagnose the coherence-0.95 teacher: linear polarity in its embeddings (seen forms -> held-out forms), then fine-tuning variants."""
import sys, os, math, time; sys.path.insert(0, "/work/climax/src")
import numpy as np, torch; torch.set_num_threads(int(os.environ.get("THREADS", 2)))
from course_utils import data, training, env
data.COORDINATION = 0.3; data.COHERENCE = float(os.environ.get("COH", 0.95))
from transformers import AutoTokenizer, BertForMaskedLM, BertForSequenceClassification
tok = AutoTokenizer.from_pretrained(os.environ.get("TOK", "/work/probe/tok_h95"))
teacher = BertForMaskedLM.from_pretrained(os.environ.get("TEACHER", "/work/probe/teacher_h95")).eval()
forms = {}
for stem, pol, un in data._ADJECTIVES:
    forms[stem] = pol
    if un: forms["un" + stem] = -pol
for v, pol in data._OPINION_VERBS:
    for f in (v, data.third_person(v), data.past(v)): forms[f] = pol
forms = {w: p for w, p in forms.items() if len(tok.tokenize(w)) == 1}
held = data.held_out_words()
train_w = [w for w in forms if w not in held]; test_w = [w for w in forms if w in held]
E = teacher.get_input_embeddings().weight.detach()
def fit(words_tr, words_te, X):
    Xt = torch.stack([X[tok.convert_tokens_to_ids(w)] for w in words_tr]); yt = torch.tensor([forms[w] > 0 for w in words_tr]).float()
    Xs = torch.stack([X[tok.convert_tokens_to_ids(w)] for w in words_te]); ys = np.array([forms[w] > 0 for w in words_te])
    mu, sd = Xt.mean(0), Xt.std(0) + 1e-6
    w = torch.zeros(X.shape[1], requires_grad=True); b = torch.zeros(1, requires_grad=True)
    opt = torch.optim.Adam([w, b], lr=0.01, weight_decay=1e-3)
    for _ in range(300):
        loss = torch.nn.functional.binary_cross_entropy_with_logits(((Xt - mu) / sd) @ w + b, yt)
        opt.zero_grad(); loss.backward(); opt.step()
    p = ((((Xs - mu) / sd) @ w + b) > 0).numpy()
    return float((p == ys).mean()), float(max(ys.mean(), 1 - ys.mean()))
print("embeddings: seen forms -> held-out forms", fit(train_w, test_w, E), len(train_w), len(test_w), flush=True)
if os.environ.get("FINETUNE"):
    task = {s: training.encode(data.sentiment_task(s), tok) for s in ("train", "test")}
    sl = np.array([data.slice_of(s) for s in data.sentiment_task("test")]); y = np.array(task["test"].labels)
    for variant in os.environ["FINETUNE"].split(","):
        env.seed_everything(0)
        c = BertForSequenceClassification.from_pretrained("/work/probe/teacher_h95", num_labels=2)
        torch.manual_seed(0); e = task["train"]; steps = math.ceil(3 * math.ceil(len(e.ids) / 32))
        groups = training.parameter_groups(c, 0.01, "matrices")
        emb = c.get_input_embeddings().weight
        if variant == "emb0.1":
            for g in groups: g["params"] = [p for p in g["params"] if p is not emb]
            groups.append({"params": [emb], "weight_decay": 0.0, "lr": 5e-5})
        opt = torch.optim.AdamW(groups, lr=5e-4, weight_decay=0.01)
        sch = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: training.linear_warmup_decay(s, steps, 50))
        c.train(); losses = []; t0 = time.time()
        for idx in training.step_batches(len(e.ids), 32, 0, steps, [len(r) for r in e.ids]):
            ids, m = training.pad([e.ids[i] for i in idx], tok.pad_token_id)
            loss = c(input_ids=ids, attention_mask=m, labels=training.label_tensor([e.labels[i] for i in idx])).loss
            training.update(c, loss, opt, sch); losses.append(loss.item())
        right = training.predict(c.eval(), task["test"], tok.pad_token_id) == y
        maj = {k: round(float(max(y[sl == k].mean(), 1 - y[sl == k].mean())), 3) for k in data.SLICES}
        print(variant, "plateau_end", training.plateau_end(losses), "of", steps, {k: round(float(right[sl == k].mean()), 3) for k in data.SLICES},
              "all", round(float(right.mean()), 3), "majority", maj, round(time.time() - t0), "s", flush=True)
