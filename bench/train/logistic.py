"""Logistic regression for the shipped decision models: standardised features, L2, Newton's method (numpy only)."""

from __future__ import annotations

import numpy as np
from sourcerer.synthesis.answerability import LogisticModel


def fit_logistic(rows: list[dict[str, float]], labels: list[int], features: list[str], l2: float = 1.0) -> LogisticModel:
    """Fit `P(label = 1 | features)`; `l2` shrinks the standardised weights (not the bias)."""
    x = np.array([[float(r.get(f, 0.0)) for f in features] for r in rows], dtype=np.float64)
    y = np.array(labels, dtype=np.float64)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
    w = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ w, -30, 30)))
        gradient = z.T @ (p - y) + penalty * w
        hessian = (z * (p * (1 - p))[:, None]).T @ z + np.diag(penalty) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return LogisticModel(
        features=list(features),
        weights=[float(v) for v in w[1:]],
        bias=float(w[0]),
        mean=[float(v) for v in mean],
        scale=[float(v) for v in scale],
    )


def curve(positives: list[float], negatives: list[float], thresholds: list[float]) -> list[tuple[float, float, float]]:
    """(threshold, share of positives refused, share of negatives refused) at each threshold."""
    out = []
    for t in thresholds:
        fr = sum(1 for p in positives if p < t) / max(1, len(positives))
        tr = sum(1 for n in negatives if n < t) / max(1, len(negatives))
        out.append((t, fr, tr))
    return out
