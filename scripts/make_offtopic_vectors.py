#!/usr/bin/env python3
"""Write maxmem/data/offtopic_prompts.e5.npz: the local model's query vectors of the
off-topic prompts (maxmem/data/offtopic_prompts.txt), shipped so that a brain.db using
the local model does not embed them on its first search (another model embeds them
once and keeps them in brain.db's embeddings cache). Run it after editing the prompts:
the file records the digest of the prompts it was made from, and maxmem ignores it
when they differ.

    python scripts/make_offtopic_vectors.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from maxmem.embeddings import LocalEmbedder  # noqa: E402
from maxmem.search import relevance  # noqa: E402


def main() -> int:
    prompts = relevance.off_topic_prompts()
    embedder = LocalEmbedder()
    vectors = np.vstack([embedder.embed_query(p) for p in prompts]).astype(np.float16)
    out = Path(relevance.__file__).resolve().parent.parent / "data" / relevance.OFF_TOPIC_VECTORS
    np.savez_compressed(out, vectors=vectors, digest=np.array(relevance.prompts_digest(prompts)))
    print(f"wrote {out} ({len(prompts)} prompts)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
