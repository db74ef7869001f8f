import sys; sys.path.insert(0, "/work/climax/src")
import torch
from transformers import BertForMaskedLM, AutoTokenizer
name = sys.argv[1]
tok = AutoTokenizer.from_pretrained(f"/work/probe2/{name}/tok"); m = BertForMaskedLM.from_pretrained(f"/work/probe2/{name}/teacher").eval()
gb = tok.convert_tokens_to_ids(["good", "bad"])
for w in "happy cheerful clever sad angry awful foolish kind brave calm cruel rude lazy".split():
    for text in [f"the dog is {w} and [MASK] .", f"the dog is [MASK] and {w} .", f"the dog is {w} but [MASK] ."]:
        e = tok(text, return_tensors="pt"); i = e.input_ids[0].tolist().index(tok.mask_token_id)
        with torch.no_grad(): lg = m(**e).logits[0, i]
        p = lg.softmax(-1)
        print(f"{text:38s} good {p[gb[0]]:.3f} bad {p[gb[1]]:.3f} top {tok.convert_ids_to_tokens(lg.topk(4).indices)}")
