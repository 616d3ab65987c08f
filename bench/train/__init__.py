"""The trainers of the shipped models (`make train`): each writes its model under `sourcerer/data/` and prints held-out figures."""
