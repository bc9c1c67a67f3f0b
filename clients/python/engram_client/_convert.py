"""Conversion between the JSON of the REST API and the dataclasses of this package."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import typing
from typing import Any, Dict, Mapping, Type, TypeVar

T = TypeVar("T", bound="Model")

_hints: Dict[type, Dict[str, Any]] = {}


def _field_types(cls: type) -> Dict[str, Any]:
    hints = _hints.get(cls)
    if hints is None:
        hints = typing.get_type_hints(cls)
        _hints[cls] = hints
    return hints


def _zero(tp: Any) -> Any:
    """The value a field missing from an answer takes: an answer from a
    server that omits an empty field still makes a record."""
    origin = typing.get_origin(tp)
    if origin is list:
        return []
    if origin is dict:
        return {}
    if tp is str:
        return ""
    if tp is int:
        return 0
    if tp is float:
        return 0.0
    if tp is bool:
        return False
    return None


def decode(tp: Any, value: Any) -> Any:
    """Turns a JSON value into the type tp (a Model, List, Dict, Optional or
    a plain type). Values of other shapes are returned as they are."""
    if value is None:
        return None
    origin = typing.get_origin(tp)
    if origin is typing.Union:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return decode(args[0], value) if len(args) == 1 else value
    if origin is list and isinstance(value, list):
        (item,) = typing.get_args(tp) or (Any,)
        return [decode(item, v) for v in value]
    if origin is dict and isinstance(value, dict):
        kv = typing.get_args(tp)
        item = kv[1] if len(kv) == 2 else Any
        return {k: decode(item, v) for k, v in value.items()}
    if isinstance(tp, type) and issubclass(tp, Model) and isinstance(value, dict):
        return tp.from_dict(value)
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def encode(value: Any) -> Any:
    """Turns a Model (or a list, dict or datetime holding some) into JSON
    values; fields that are None are left out."""
    if isinstance(value, Model):
        return value.to_dict()
    if isinstance(value, _dt.datetime):
        return format_time(value)
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    return value


def format_time(t: Any) -> Any:
    """RFC 3339 for a datetime (a naive one is taken as UTC); a string is
    passed on for the server to judge."""
    if isinstance(t, _dt.datetime):
        if t.tzinfo is None:
            t = t.replace(tzinfo=_dt.timezone.utc)
        s = t.isoformat()
        return s[:-6] + "Z" if s.endswith("+00:00") else s
    return t


class Model:
    """Base of the records: from_dict reads the server's JSON (ignoring
    fields a newer server adds), to_dict writes it back."""

    @classmethod
    def from_dict(cls: Type[T], data: Mapping[str, Any]) -> T:
        """Builds the record from a JSON object. Fields it lacks take their
        zero value (empty string, 0, empty list) or None."""
        kwargs: Dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            tp = _field_types(cls)[f.name]
            if f.name in data:
                kwargs[f.name] = decode(tp, data[f.name])
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                kwargs[f.name] = _zero(tp)
        return cls(**kwargs)

    def to_dict(self) -> Dict[str, Any]:
        """The record as a JSON object, without the fields that are None."""
        out: Dict[str, Any] = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if v is not None:
                out[f.name] = encode(v)
        return out
