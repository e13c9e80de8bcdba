"""A user's own law, in the spirit of lmfit's ``Model(func)``: a formula of compute and its
parameters in the user's units, fitted by the general path (scipy's ``least_squares``,
:func:`saturate.fit.solver.solve_general`) and then treated as any other law. Pass it among the
laws: ``analyze(source, laws=["power", law])``.

>>> law = Model(exp_rise, params={"top": dict(value=1, min=0, max=10), "rate": 1e-3})
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NoReturn

import numpy as np
from numpy.typing import NDArray

from saturate.errors import SettingsError
from saturate.fit.laws import LAWS, Law, Param
from saturate.fit.prep import Normalisation

__all__ = ["Model", "UserLaw", "check_laws", "law_of"]

Array = NDArray[np.float64]
#: Normalised computes where a user's law is taken to have levelled off: when its values there
#: differ by less than ``_FLAT`` (standard deviations) the farther one is its asymptote, else +-inf.
_FAR, _FARTHER, _FLAT = 1e12, 1e24, 1e-3


class Model:
    """A law of the user's: ``func(x, p1, p2, ...)`` with ``x`` the compute in the user's units
    (an array) and the parameters as numbers (or columns of numbers: a function written with
    numpy operations is evaluated for many parameter vectors at once).

    ``params``: per parameter (default: ``func``'s arguments after the first) its start as a
    number or ``dict(value=start, min=lower, max=upper)``; a bound left out is infinite, a start
    left out the middle of finite bounds (else the bound nearest 0, else 0). ``name``: the law's
    name in reports (default: ``func.__name__``).
    """

    def __init__(self, func: Callable[..., Any], params: Mapping[str, Any] | None = None, *,
                 name: str | None = None) -> None:
        if not callable(func):
            raise SettingsError(f"Model: expected a function of x and the parameters, got {func!r}")
        self.func = func
        self.name = str(name or getattr(func, "__name__", "") or "model")
        if self.name in LAWS or not self.name.isidentifier() or self.name == "<lambda>":
            raise SettingsError(f"Model: name {self.name!r} must be a new identifier, not one of "
                                f"the built-in laws ({', '.join(LAWS)}); give name=...")
        given = dict(params or {})
        names = tuple(given) or _arguments(func)
        if not names:
            raise SettingsError(f"Model {self.name}: no parameters (give params= or a function "
                                "of x and its parameters)")
        self.params = tuple(_param(self.name, n, given.get(n)) for n in names)

    def __repr__(self) -> str:
        args = ", ".join(f"{n}={v:g} [{lo:g}, {hi:g}]" for n, v, lo, hi in self.params)
        return f"Model({self.name}: {args})"

    def to_dict(self) -> dict[str, Any]:
        """How a report's settings show this law: its name, formula and parameters."""
        return {"name": self.name, "formula": self.law().formula,
                "params": {n: {"value": v, "min": lo, "max": hi} for n, v, lo, hi in self.params}}

    def law(self) -> UserLaw:
        """This model as a :class:`~saturate.fit.laws.Law` (not yet bound to a curve)."""
        args = ", ".join(p[0] for p in self.params)
        return UserLaw(
            name=self.name, formula=f"{self.name}(C, {args})",
            params=tuple(Param(n, lo, hi, "user parameter") for n, _, lo, hi in self.params),
            n_linear=0, _model=_unbound, _basis=_unbound, _grid=_unbound, _asymptote=_unbound,
            func=self.func, start=np.array([v for _, v, _, _ in self.params]),
        )


def _arguments(func: Callable[..., Any]) -> tuple[str, ...]:
    try:
        args = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return ()
    return tuple(a.name for a in args[1:]
                 if a.kind in (a.POSITIONAL_ONLY, a.POSITIONAL_OR_KEYWORD, a.KEYWORD_ONLY))


def _param(model: str, name: str, spec: Any) -> tuple[str, float, float, float]:
    """``(name, start, lower, upper)`` from a number or ``dict(value=, min=, max=)``."""
    spec = {} if spec is None else spec
    where = f"Model {model}: parameter {name!r}"
    if not isinstance(spec, Mapping):
        spec = {"value": spec}
    unknown = sorted(set(spec) - {"value", "min", "max"})
    if unknown:
        raise SettingsError(f"{where}: unknown keys {unknown} (expected value, min, max)")
    try:
        lo, hi = float(spec.get("min", -math.inf)), float(spec.get("max", math.inf))
        start = spec.get("value")
        start = _default_start(lo, hi) if start is None else float(start)
    except (TypeError, ValueError):
        raise SettingsError(f"{where}: value, min and max must be numbers, got {dict(spec)}") from None
    if math.isnan(lo) or math.isnan(hi) or not lo < hi:
        raise SettingsError(f"{where}: min must be below max, got min={lo:g}, max={hi:g}")
    if not (math.isfinite(start) and lo <= start <= hi):
        raise SettingsError(f"{where}: the start {start:g} must be a finite number within "
                            f"[{lo:g}, {hi:g}]")
    return name, start, lo, hi


def _default_start(lo: float, hi: float) -> float:
    if math.isfinite(lo) and math.isfinite(hi):
        return (lo + hi) / 2
    return lo if math.isfinite(lo) and lo > 0 else hi if math.isfinite(hi) and hi < 0 else 0.0


def _unbound(*_: Any) -> NoReturn:
    raise TypeError("a user's law is evaluated once bound to a curve (UserLaw.bound)")


@dataclass(frozen=True, eq=False)
class UserLaw(Law):
    """A :class:`Model` as a law: parameters in the user's units (kind ``plain``), evaluated in
    the fitting coordinates of the curve it is ``bound`` to (``norm``)."""

    func: Callable[..., Any] = field(default=_unbound, repr=False)
    start: Array = field(default_factory=lambda: np.zeros(0), repr=False)
    norm: Normalisation | None = None

    def bound(self, norm: Normalisation) -> UserLaw:
        """This law in the fitting coordinates of the curve ``norm`` normalises."""
        return replace(self, norm=norm)

    def _values(self, x: Array, theta: Array) -> Array:
        """``norm.y(func(compute, *theta))`` for ``theta`` (..., k): shape (..., n)."""
        norm = self.norm
        if norm is None:
            _unbound()
        c = np.asarray(x, dtype=float) * norm.c_ref - norm.offset
        th = np.asarray(theta, dtype=float)
        shape = (*th.shape[:-1], c.shape[0])
        with np.errstate(all="ignore"):
            try:
                v = np.asarray(self.func(c, *(th[..., i, None] for i in range(self.k))), dtype=float)
                v = np.broadcast_to(v, shape)
            except (TypeError, ValueError):  # not vectorised: one parameter vector at a time
                rows = th.reshape(-1, self.k)
                v = np.array([np.broadcast_to(np.asarray(self.func(c, *r), dtype=float), c.shape)
                              for r in rows]).reshape(shape)
            return norm.y(v)

    def model(self, x: Any, theta: Any, log_x: Array | None = None) -> tuple[Array, Any]:
        return self.evaluate(np.asarray(x, dtype=float), log_x, np.asarray(theta, dtype=float))

    def evaluate(self, x: Array, log_x: Array | None, theta: Array) -> tuple[Array, Any]:
        f = self._values(x, theta)
        return f, lambda: self._jacobian(x, theta, f)

    def _jacobian(self, x: Array, theta: Array, f: Array) -> Array:
        """Forward differences (..., n, k), stepping away from a bound that is near."""
        cols = []
        for i, p in enumerate(self.params):
            t = theta[..., i]
            h = np.sqrt(np.finfo(float).eps) * np.maximum(np.abs(t), 1.0)
            h = np.where(t + h > p.upper, -h, h)
            moved = theta.copy()
            moved[..., i] = t + h
            cols.append((self._values(x, moved) - f) / h[..., None])
        return np.stack(cols, axis=-1)

    def asymptote(self, theta: Any) -> Array | float:
        th = np.asarray(theta, dtype=float)
        far = self._values(np.array([_FAR, _FARTHER]), th)
        near, farther = far[..., 0], far[..., 1]
        flat = np.abs(farther - near) <= _FLAT
        out = np.where(flat, farther, np.where(farther > near, np.inf, -np.inf))
        return float(out) if np.ndim(out) == 0 else out

    def starts_batch(self, x: Any, y: Any, w: Any, m: int = 4) -> Array:
        """The user's start, once per weighting ``w`` (o, n): (o, 1, k)."""
        o = np.atleast_2d(np.asarray(w)).shape[0]
        return np.broadcast_to(self.start, (o, 1, self.k)).copy()


def law_of(item: str | Model | Law, norm: Normalisation | None = None) -> Law:
    """The law a ``laws`` setting's entry names: a built-in by name, a :class:`Model`'s law
    (bound to ``norm`` when given)."""
    if isinstance(item, str):
        return LAWS[item]
    law = item.law() if isinstance(item, Model) else item
    return law.bound(norm) if isinstance(law, UserLaw) and norm is not None else law


def check_laws(value: Any, name: str = "laws") -> tuple[str | Model, ...]:
    """The ``laws`` setting: built-in names (a list or comma lists, as for any choice) and
    :class:`Model` objects, in the order given; a SettingsError otherwise."""
    from saturate.settings.checks import check_choices

    items = [value] if isinstance(value, (str, Model)) else value
    if not isinstance(items, Iterable):
        return check_choices(value, name, tuple(LAWS), at_least_one=True)
    items = list(items)
    models = [m for m in items if isinstance(m, Model)]
    names = [m for m in items if not isinstance(m, Model)]
    out: list[str | Model] = []
    if names or not models:
        out += check_choices(names, name, tuple(LAWS), at_least_one=not models)
    seen = set(out)
    for m in models:
        if m.name in seen:
            raise SettingsError(f"{name}: two laws are named {m.name!r}")
        seen.add(m.name)
        out.append(m)
    return tuple(out)
