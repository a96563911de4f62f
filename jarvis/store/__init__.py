"""MCPM 2.x's files, read and written by Jarvis itself (mcpm is not imported: its pins conflict with ours).

models.py       typed records that keep unknown fields
mcpm_store.py   the folder: locked, atomic, conflict-checked reads and writes
sync.py         profile metadata against the servers' profile_tags (jarvis_diagnose config_sync)
"""
