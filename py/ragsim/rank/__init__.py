"""Layer 3, rank: BM25's formulas, the exact logarithm, ranking, dense and hybrid."""
