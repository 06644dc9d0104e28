"""The operations a server runs, as readable records (ListOperations, docs/protocol.md).

    for op in s.operations():
        print(op)     # Softmax(X, *, axis: int = -1, scale: float = 1.0)  [differentiable]  ...
"""

from __future__ import annotations

from typing import Any, List

_KINDS = {1: 'int', 2: 'float', 3: 'str', 4: 'ints', 5: 'floats'}


class AttributeInfo:
    """One attribute: name, kind ('int', 'float', 'str', 'ints', 'floats'), required,
    default (a Python value, None when required), doc."""

    __slots__ = ('name', 'kind', 'required', 'default', 'doc')

    def __init__(self, spec: Any) -> None:
        self.name = spec.name
        self.kind = _KINDS.get(spec.kind, 'unspecified')
        self.required = spec.required
        self.default = None if spec.required else _value(spec.default_value)
        self.doc = spec.doc

    def __str__(self) -> str:
        return '%s: %s%s' % (self.name, self.kind, '' if self.required else ' = %r' % (self.default,))

    __repr__ = __str__


class OperationInfo:
    """One operation: name, inputs (names; optional ones end with '?', a variadic one with
    '...'), attributes (AttributeInfo list), differentiable, doc."""

    __slots__ = ('name', 'inputs', 'attributes', 'differentiable', 'doc')

    def __init__(self, spec: Any) -> None:
        self.name = spec.name
        self.inputs = [i.name + ('...' if i.variadic else '?' if i.optional else '')
                       for i in spec.inputs]
        self.attributes = [AttributeInfo(a) for a in spec.attributes]
        self.differentiable = spec.differentiable
        self.doc = spec.doc

    @property
    def signature(self) -> str:
        """'Softmax(X, *, axis: int = -1, scale: float = 1.0)'."""
        attrs = [str(a) for a in self.attributes]
        return '%s(%s)' % (self.name, ', '.join(self.inputs + (['*'] + attrs if attrs else [])))

    def __str__(self) -> str:
        return '%s%s  %s' % (self.signature, '  [differentiable]' if self.differentiable else '',
                             self.doc)

    def __repr__(self) -> str:
        return 'OperationInfo(%s)' % self.signature


def _value(attr: Any) -> Any:
    """The Python value of a protocol Attribute (None when unset)."""
    which = attr.WhichOneof('value')
    if which in ('ints', 'floats'):
        return list(getattr(attr, which).values)
    return getattr(attr, which) if which else None


def list_operations(session: Any, name: str = '') -> List[OperationInfo]:
    """ListOperations: every operation of the server (or the one named), as OperationInfo."""
    from .client import pb
    reply = session._call('ListOperations', pb.ListOperationsRequest(name=name))
    return [OperationInfo(spec) for spec in reply.operations]
