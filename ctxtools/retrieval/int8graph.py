"""The encoder's ONNX graph made to keep its int8 weights int8 (``encoder.open_session``).

The shipped all-MiniLM-L6-v2 file stores each weight matrix as int8 values and a float32
scale, and turns them into float32 in the graph itself (``Cast`` to float, ``Mul`` by
the scale). onnxruntime folds those constants once a session is made: 90 MB of float32
weights, and a peak of +217 MB while it folds. Rewritten here, in memory, before the
session is made:

- a weight matrix feeding a ``MatMul`` (36 of them, scaled per output column) is read
  through a ``DequantizeLinear`` on that axis instead, which onnxruntime does not fold:
  its QDQ fusion makes the pair an int8 ``MatMulNBits`` (``encoder`` pins its block size
  and accuracy level), the weights staying int8 in memory;
- a table read by a ``Gather`` (the word and position embeddings, scaled per row) is
  gathered first, its int8 rows and their scales, and only those rows are made float:
  the same numbers, bit for bit, as the rows of the whole table made float.

Any other use of such a pair is left as it is (onnxruntime folds it, as before). The
file is read as protobuf's wire format by hand (``onnx`` is no dependency): only the
fields named below are understood; every other field is copied as it is.
"""

from __future__ import annotations

from collections.abc import Iterator

# field numbers of onnx.proto
_MODEL_GRAPH = 7
_GRAPH_NODE, _GRAPH_INITIALIZER = 1, 5
_NODE_INPUT, _NODE_OUTPUT, _NODE_OP, _NODE_ATTRIBUTE = 1, 2, 4, 5
_TENSOR_DIMS, _TENSOR_TYPE, _TENSOR_NAME = 1, 2, 8
_ATTR_NAME, _ATTR_I, _ATTR_TYPE = 1, 3, 20
_ATTR_INT = 2  # AttributeProto.INT
FLOAT, INT8 = 1, 3  # TensorProto.DataType


# --- protobuf's wire format ------------------------------------------------------------


def _varint(buf, pos: int) -> tuple[int, int]:
    out = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        out |= (b & 0x7F) << shift
        if b < 0x80:
            return out, pos
        shift += 7


def fields(buf) -> Iterator[tuple[int, int, object, int, int]]:
    """The fields of the message in BUF (a memoryview or bytes), in order: (number, wire
    type, value, start, end). A varint's value is its int, a length-delimited field's its
    bytes' view, a fixed-width field's None; BUF[start:end] is the field as written."""
    pos, end = 0, len(buf)
    while pos < end:
        start = pos
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 2:
            size, pos = _varint(buf, pos)
            value, pos = buf[pos : pos + size], pos + size
        elif wire in (1, 5):
            value, pos = None, pos + (8 if wire == 1 else 4)
        else:
            raise ValueError(f"wire type {wire} is not read")
        if pos > end:
            raise ValueError("a field runs past its message")
        yield number, wire, value, start, pos


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        if n < 0x80:
            out.append(n)
            return bytes(out)
        out.append((n & 0x7F) | 0x80)
        n >>= 7


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field."""
    return _uvarint(number << 3 | 2) + _uvarint(len(payload)) + payload


def _int_field(number: int, value: int) -> bytes:
    return _uvarint(number << 3) + _uvarint(value)


# --- the graph's nodes and initializers ------------------------------------------------


class _Node:
    """A node's op type, inputs and outputs (its other fields only in its bytes)."""

    def __init__(self, raw):
        self.raw = raw
        self.op, self.inputs, self.outputs = "", [], []
        for number, _, value, _, _ in fields(raw):
            if number == _NODE_OP:
                self.op = bytes(value).decode()
            elif number == _NODE_INPUT:
                self.inputs.append(bytes(value).decode())
            elif number == _NODE_OUTPUT:
                self.outputs.append(bytes(value).decode())


def _tensor_head(raw) -> tuple[str, int, list[int]]:
    """An initializer's name, data type and dims."""
    name, dtype, dims = "", 0, []
    for number, wire, value, _, _ in fields(raw):
        if number == _TENSOR_NAME:
            name = bytes(value).decode()
        elif number == _TENSOR_TYPE:
            dtype = value
        elif number == _TENSOR_DIMS and wire == 0:
            dims.append(value)
        elif number == _TENSOR_DIMS:  # (packed)
            pos = 0
            while pos < len(value):
                d, pos = _varint(value, pos)
                dims.append(d)
    return name, dtype, dims


def _with_dims(raw, dims: list[int]) -> bytes:
    """The initializer RAW with DIMS as its dims (its data and name kept)."""
    rest = b"".join(bytes(raw[s:e]) for n, _, _, s, e in fields(raw) if n != _TENSOR_DIMS)
    return b"".join(_int_field(_TENSOR_DIMS, d) for d in dims) + rest


def node(op: str, inputs: list[str], outputs: list[str], **ints: int) -> bytes:
    """A NodeProto of the default domain; INTS its integer attributes."""
    out = [_field(_NODE_INPUT, i.encode()) for i in inputs]
    out += [_field(_NODE_OUTPUT, o.encode()) for o in outputs]
    out.append(_field(3, f"{outputs[0]}/int8".encode()))  # (its name)
    out.append(_field(_NODE_OP, op.encode()))
    for name, value in ints.items():
        attr = _field(_ATTR_NAME, name.encode()) + _int_field(_ATTR_I, value)
        out.append(_field(_NODE_ATTRIBUTE, attr + _int_field(_ATTR_TYPE, _ATTR_INT)))
    return b"".join(out)


# --- the rewrite -----------------------------------------------------------------------


def rewrite(model: bytes) -> tuple[bytes, int]:
    """MODEL (an ONNX file's bytes) with its int8 weights kept int8 (see the module's
    docstring), and how many weights were rewritten (0: MODEL as it was)."""
    view = memoryview(model)
    parts: list = []
    count = 0
    for number, _, value, start, end in fields(view):
        if number == _MODEL_GRAPH:
            graph, count = _rewrite_graph(value)
            parts += _pieces(_MODEL_GRAPH, graph)
        else:
            parts.append(view[start:end])
    # (one copy: the pieces are views of MODEL until they are joined)
    return (b"".join(parts), count) if count else (model, 0)


def _pieces(number: int, payload: list) -> list:
    """A length-delimited field whose payload is the concatenation of PAYLOAD."""
    size = sum(len(p) for p in payload)
    return [_uvarint(number << 3 | 2) + _uvarint(size), *payload]


def _rewrite_graph(graph) -> tuple[list, int]:
    nodes, inits, other = [], {}, []
    for number, _, value, start, end in fields(graph):
        if number == _GRAPH_NODE:
            nodes.append(_Node(value))
        elif number == _GRAPH_INITIALIZER:
            inits[_tensor_head(value)[0]] = value
        else:
            other.append(graph[start:end])
    plan = _Plan(nodes, inits)
    out = [_field(_GRAPH_NODE, n) for n in plan.nodes()]
    for name, raw in inits.items():
        out += _pieces(_GRAPH_INITIALIZER, [plan.initializer(name, raw)])
    return out + other, plan.count


class _Plan:
    """The dequantizing pairs (``Cast`` of an int8 initializer, then ``Mul`` by a float
    initializer) that one ``MatMul`` or one ``Gather`` reads, and what replaces them."""

    def __init__(self, nodes: list[_Node], inits: dict):
        self.order = nodes
        self.heads = {name: _tensor_head(raw) for name, raw in inits.items()}
        users: dict[str, list[_Node]] = {}
        for n in nodes:
            for i in n.inputs:
                users.setdefault(i, []).append(n)
        self.dropped: set[int] = set()  # ids of the nodes replaced
        self.instead: dict[int, list[bytes]] = {}  # a node's id: the nodes in its place
        self.flat: dict[str, list[int]] = {}  # a scale made one-dimensional: its new dims
        self.count = 0
        for cast in nodes:
            pair = self._pair(cast, users)
            if pair is not None:
                self._replace(*pair)

    def _pair(self, cast: _Node, users: dict):
        """(cast, mul, its one user, the int8 weight's dims, the scale's dims), or None."""
        if cast.op != "Cast" or len(cast.inputs) != 1 or len(users.get(cast.outputs[0], [])) != 1:
            return None
        if _attributes(cast) != {"to": FLOAT}:
            return None
        weight = self.heads.get(cast.inputs[0])
        (mul,) = users[cast.outputs[0]]
        if weight is None or weight[1] != INT8 or mul.op != "Mul" or len(mul.inputs) != 2:
            return None
        scale = self.heads.get(mul.inputs[1])
        readers = users.get(mul.outputs[0], [])
        if mul.inputs[0] != cast.outputs[0] or scale is None or scale[1] != FLOAT:
            return None
        if len(users.get(mul.inputs[1], [])) != 1 or len(readers) != 1:
            return None
        return cast, mul, readers[0], weight[2], scale[2]

    def _replace(self, cast, mul, user, wdims, sdims) -> None:
        q, s, w = cast.inputs[0], mul.inputs[1], mul.outputs[0]
        if user.op == "MatMul" and user.inputs[1:] == [w] and len(wdims) == 2:
            if sdims != [1, wdims[1]]:
                return
            self.flat[s] = [wdims[1]]
            self.instead[id(mul)] = [node("DequantizeLinear", [q, s], [w], axis=1)]
        elif user.op == "Gather" and user.inputs[:1] == [w] and len(user.inputs) == 2:
            if len(wdims) != 2 or sdims != [wdims[0], 1] or _attributes(user) not in ({}, AXIS_0):
                return
            ids, out = user.inputs[1], user.outputs[0]
            self.instead[id(user)] = [
                node("Gather", [q, ids], [out + "/q"]),
                node("Gather", [s, ids], [out + "/scale"]),
                node("Cast", [out + "/q"], [out + "/float"], to=FLOAT),
                node("Mul", [out + "/float", out + "/scale"], [out]),
            ]
            self.dropped.add(id(mul))
        else:
            return
        self.dropped.add(id(cast))
        self.count += 1

    def nodes(self) -> Iterator[bytes]:
        for n in self.order:
            yield from self.instead.get(id(n), [])
            if id(n) not in self.dropped and id(n) not in self.instead:
                yield n.raw

    def initializer(self, name: str, raw):
        return _with_dims(raw, self.flat[name]) if name in self.flat else raw


AXIS_0 = {"axis": 0}


def _attributes(n: _Node) -> dict:
    """N's attributes: an integer one by its name and value, any other by its name and
    None."""
    out = {}
    for number, _, value, _, _ in fields(n.raw):
        if number != _NODE_ATTRIBUTE:
            continue
        name, i, kind = "", None, None
        for f, _, v, _, _ in fields(value):
            if f == _ATTR_NAME:
                name = bytes(v).decode()
            elif f == _ATTR_I:
                i = v - (1 << 64) if v >= 1 << 63 else v
            elif f == _ATTR_TYPE:
                kind = v
        out[name] = i if kind == _ATTR_INT else None
    return out
