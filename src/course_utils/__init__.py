"""course_utils: the shared package of "Attention, step by step — from RNNs to DistilBERT".

One module per idea, in lesson order; each module's docstring says more. "used" names the lessons
that use a module, first to last (a later lesson may reuse an earlier one's module).

=====================  =====  ========================================================
module                 used   what it holds
=====================  =====  ========================================================
``env``                00-08  seeds, device, Colab and hub detection, setup_notebook
``data``               00-08  the running example "I love NLP", the course corpus
``plots``              00-08  plotly figure builders, one palette
``rendering``          00-08  the course renderer: figures in notebooks and on the site
``precision``          00-09  what a figure shows of a number; comparing outputs across CPUs
``tables``             01-08  labelled text tables of vectors
``quiz``               01-08  the self-check quiz at the end of a lesson
``checks``             00-08  exercise checkers, one module per topic
``versions``           00     supported and installed package versions
``rnn``                01-04  numpy RNN, LSTM, BiLSTM
``compare``            01     RNN, LSTM, BiLSTM and an encoder block, side by side
``tokenization``       02-08  the bundled WordPiece tokenizer, the hub fallback
``embeddings``         02     the embedding lookup
``positional``         03-05  sinusoidal and learned position encodings
``attention``          03-06  scaled dot-product and multi-head attention
``masking``            05-07  padding and causal masks, MLM masking
``hf_reference``       05,09  Hugging Face's own mask, RoPE and repeat_kv functions
``encoder``            06-07  DistilBERT's encoder from scratch (the model)
``encoder_pieces``     06     LayerNorm and the block as plain functions
``hf_weights``         06-07  Hugging Face's and BERT's weights in the encoder
``costs``              06-08  what a model costs: weights, latency, training's extras
``training``           02-08  training steps and loops, metrics
``models``             01-08  the bundled teacher and students, hub models
``students``           07-08  a student made from its teacher: layers, config, weights
``distill``            07-08  distillation losses, the distillation step and loop
``stats``              07-08  paired differences over seeds, their tests and intervals, Holm, AUC
``probes``             07     where a model keeps the held-out words' polarity: probes of its table
``sizes``              07-08  parameter counts from model configs
``task_heads``         08     classification head, word labels on WordPiece tokens
``inference``          08     int8 quantisation, bf16, size on disk
``prenorm``            09     the pre-LN block, equal to torch's norm_first layer
``rope``               09     rotary position embeddings, Llama's layout
``grouped_query``      09     repeat_kv and the KV cache's bytes from model configs
``decoder``            09     a small RoPE decoder, its KV cache, generation
``online_softmax``     09     attention over blocks of keys, peak memory measured
``widgets``            03-07  explorers: live ipywidgets and kernel-free twins
``figures``            01-07  each lesson's own figures and explorers
``validation``         all    the argument checks every module shares
``bundle``             all    the bundled assets on disk, checked by sha256
``course_map``         intro  the course map of the introduction
``pages``              all    the page kinds of lessons/: a lesson and its lab page
``book``               site   the Sphinx extension behind the site
``authoring``          -      instructor tools: execute, time, handouts, scaffold, make assets
=====================  =====  ========================================================
"""

from . import env, plots

__version__ = "0.1.0"
__all__ = ["env", "plots", "__version__"]
