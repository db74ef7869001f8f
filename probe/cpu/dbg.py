import sys; sys.path.insert(0, "/work/climax/src")
import torch
from transformers import BertForMaskedLM, AutoTokenizer
from course_utils import data
name = sys.argv[1]
tok = AutoTokenizer.from_pretrained(f"/work/probe2/{name}/tok"); m = BertForMaskedLM.from_pretrained(f"/work/probe2/{name}/teacher").eval()
for text in ["the happy dog is [MASK] .", "the sad dog is [MASK] .", "the dog is happy and [MASK] .", "the dog is sad and [MASK] .", "the cheerful cats are not [MASK] .", "the angry cats are not [MASK] .", "the owls [MASK] chased the angry dogs ."]:
    e = tok(text, return_tensors="pt"); print(tok.convert_ids_to_tokens(e.input_ids[0]))
    i = e.input_ids[0].tolist().index(tok.mask_token_id)
    with torch.no_grad(): lg = m(**e).logits[0, i]
    top = lg.topk(8).indices
    print(text, "->", tok.convert_ids_to_tokens(top))
