"""The jobs' floor: audit, eval and inspect over a whole corpus or store, as functions of a plan or
of parsed options (their passes and how their answers merge). It imports corpus and clients only."""
