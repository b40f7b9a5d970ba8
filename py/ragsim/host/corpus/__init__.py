"""The corpus floor: the run protocol every job shares: the files walked and batched, the engines
that run a pass over them (this machine's processes or a Dask cluster), spilled work, progress, and
the JSON Lines output with its checkpoint for `--resume`. It imports clients only."""
