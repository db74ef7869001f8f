import sys, os, time; sys.path.insert(0, "/work/main/src")
import torch; torch.set_num_threads(2)
from course_utils import data, tokenization, training, models, env
data.COORDINATION = 0.3; data.COHERENCE = float(os.environ.get("COH", 0.95))
tok = tokenization.build_tokenizer(tokenization.train_wordpiece([s.text for s in data.corpus("train")]))
tok.save_pretrained("/work/probe/tok_h95")
enc = training.encode(data.corpus("train"), tok)
from transformers import BertForMaskedLM
env.seed_everything(0)
t = BertForMaskedLM(models.teacher_config(tok)); t0 = time.time()
training.train_mlm(t, enc, tok, progress=False, **models.PRETRAINING)
t.save_pretrained("/work/probe/teacher_h95"); print("done", time.time() - t0)
