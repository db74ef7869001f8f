"""Tools for instructors and authors (not used by the lessons themselves).

- :mod:`.lessons`: the repository settings of ``_config.yml``, the Colab badge and set-up cell
  derived from them, executing lessons into their committed ``.ipynb`` twins;
- :mod:`.lockfile`: the pinned stack (``requirements.lock``) and its conda mirror (``environment.yml``);
- :mod:`.bench`: lesson execution times and book build times;
- :mod:`.assets`: ``make assets``, the bundled tokenizer and models retrained stage by stage.
"""
