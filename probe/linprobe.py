"""Does the bundled (old-corpus) teacher encode word polarity linearly? Fit on 60% of sentiment forms, test on the rest."""
import sys; sys.path.insert(0, "/work/main/src")
import numpy as np, torch
from course_utils import data, models, tokenization
tok = tokenization.load_bundled_tokenizer()
teacher = models.load_bundled("teacher")
forms = {}
for stem, pol, un in data._ADJECTIVES:
    forms[stem] = pol
    if un: forms["un" + stem] = -pol
for v, pol in data._OPINION_VERBS:
    forms[v] = pol; forms[data.third_person(v)] = pol; forms[data.past(v)] = pol
forms = {w: p for w, p in forms.items() if len(tok.tokenize(w)) == 1}
words = sorted(forms); y = np.array([forms[w] > 0 for w in words], float)
ids = torch.tensor(tok.convert_tokens_to_ids(words))
E = teacher.get_input_embeddings().weight[ids].detach().numpy()
def ctx(w):
    text = f"the cat is {w} ." if w in dict((s, 0) for s, _, _ in data._ADJECTIVES) or w.startswith("un") else f"the cat {w} the dogs ."
    enc = tok(text, return_tensors="pt")
    with torch.no_grad():
        h = teacher.bert(**enc).last_hidden_state[0]
    pos = enc.input_ids[0].tolist().index(tok.convert_tokens_to_ids(w))
    return h[pos].numpy(), h[0].numpy()
C = np.array([ctx(w)[0] for w in words]); CLS = np.array([ctx(w)[1] for w in words])
rng = np.random.default_rng(0)
def probe(X):
    accs = []
    for r in range(20):
        idx = rng.permutation(len(words)); tr, te = idx[: int(0.6 * len(idx))], idx[int(0.6 * len(idx)):]
        Xt = torch.tensor(X[tr]); yt = torch.tensor(y[tr])
        w = torch.zeros(X.shape[1], requires_grad=True); b = torch.zeros(1, requires_grad=True)
        opt = torch.optim.Adam([w, b], lr=0.01, weight_decay=1e-3)
        mu, sd = Xt.mean(0), Xt.std(0) + 1e-6
        for _ in range(300):
            loss = torch.nn.functional.binary_cross_entropy_with_logits(((Xt - mu) / sd) @ w + b, yt.float())
            opt.zero_grad(); loss.backward(); opt.step()
        p = (((torch.tensor(X[te]) - mu) / sd) @ w + b > 0).numpy()
        accs.append((p == (y[te] > 0)).mean())
    return np.mean(accs), np.std(accs)
print(len(words), "forms; positive share", y.mean())
print("input embeddings:", probe(E))
print("contextual (word position):", probe(C))
print("contextual ([CLS]):", probe(CLS))
