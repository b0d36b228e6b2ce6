"""training.distill.distill_loss: the values are the formula's, and its gradient pulls the student
to the teacher (not to the labels) when alpha = 1.

Formula: alpha * tau^2 * KL(p_teacher/tau || p_student/tau) + (1 - alpha) * CE(student, labels),
KL averaged over the positions whose label is not ignore_index; with top_k the teacher keeps its
k largest logits (renormalised over them) and the student is scored on those ids.
"""
import numpy as np
import pytest
import torch

from training.distill import distill_loss


def _log_softmax(x: np.ndarray) -> np.ndarray:
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def _by_hand(s, t, tgt, alpha, tau, top_k, ignore=-100):
    """The loss written out in float64 numpy, one position at a time."""
    V = s.shape[-1]
    s, t, tgt = s.reshape(-1, V).astype(np.float64), t.reshape(-1, V).astype(np.float64), tgt.reshape(-1)
    kls, ces = [], []
    for i in range(len(tgt)):
        if tgt[i] == ignore:
            continue
        ces.append(-_log_softmax(s[i])[tgt[i]])
        ids = np.argsort(-t[i], kind="stable")[:top_k] if top_k else np.arange(V)
        lt = _log_softmax(t[i][ids] / tau)
        ls = _log_softmax(s[i] / tau)[ids]
        kls.append(float(np.sum(np.exp(lt) * (lt - ls))))
    kl = tau ** 2 * np.mean(kls)
    ce = np.mean(ces)
    return alpha * kl + (1 - alpha) * ce, kl, ce


@pytest.mark.parametrize("top_k,tau,alpha", [(0, 1.0, 0.5), (0, 2.0, 0.7), (3, 1.0, 0.3), (3, 2.0, 1.0)])
def test_loss_is_the_formula(top_k, tau, alpha):
    g = torch.Generator().manual_seed(top_k * 10 + int(tau))
    s = torch.randn(2, 3, 7, generator=g) * 2
    t = torch.randn(2, 3, 7, generator=g) * 2
    tgt = torch.randint(0, 7, (2, 3), generator=g)
    tgt[1, 2] = -100  # an ignored position counts in neither term
    total, kl, ce = distill_loss(s, t, tgt, alpha, tau, top_k)
    want = _by_hand(s.numpy(), t.numpy(), tgt.numpy(), alpha, tau, top_k)
    np.testing.assert_allclose([float(total), float(kl), float(ce)], want, rtol=1e-5, atol=1e-6)


def test_kl_is_zero_only_when_the_student_is_the_teacher():
    t = torch.randn(1, 4, 9, generator=torch.Generator().manual_seed(1))
    tgt = torch.zeros(1, 4, dtype=torch.long)
    assert float(distill_loss(t.clone(), t, tgt, 1.0, 2.0)[1]) == pytest.approx(0.0, abs=1e-6)
    # a constant shift of the logits is the same distribution
    assert float(distill_loss(t + 3.0, t, tgt, 1.0, 2.0)[1]) == pytest.approx(0.0, abs=1e-5)
    assert float(distill_loss(t.flip(-1), t, tgt, 1.0, 2.0)[1]) > 0.1


def _train_student(alpha: float, teacher_logits, labels, x, steps=60):
    torch.manual_seed(0)
    student = torch.nn.Linear(x.shape[-1], teacher_logits.shape[-1])
    opt = torch.optim.SGD(student.parameters(), lr=1.0)
    for _ in range(steps):
        opt.zero_grad()
        distill_loss(student(x)[None], teacher_logits[None], labels[None], alpha, 1.0)[0].backward()
        opt.step()
    with torch.no_grad():
        return student(x)


def test_the_teacher_moves_the_student():
    """With alpha = 1 the student learns the teacher's predictions, which here disagree with every
    label; with alpha = 0 (labels only) it learns the labels instead."""
    g = torch.Generator().manual_seed(2)
    x = torch.randn(16, 8, generator=g)
    teacher_logits = 4 * (x @ torch.randn(8, 5, generator=g))
    teacher_top = teacher_logits.argmax(-1)
    labels = (teacher_top + 1) % 5
    tgt = labels[None]
    before = float(distill_loss(torch.zeros(1, 16, 5), teacher_logits[None], tgt, 1.0, 1.0)[1])

    distilled = _train_student(1.0, teacher_logits, labels, x)
    kl_after = float(distill_loss(distilled[None], teacher_logits[None], tgt, 1.0, 1.0)[1])
    assert kl_after < 0.1 * before
    assert (distilled.argmax(-1) == teacher_top).float().mean() >= 0.9

    from_labels = _train_student(0.0, teacher_logits, labels, x)
    assert (from_labels.argmax(-1) == labels).float().mean() >= 0.9
    assert float(distill_loss(from_labels[None], teacher_logits[None], tgt, 1.0, 1.0)[1]) > before
