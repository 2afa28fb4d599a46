"""autograd's container helpers: vecgrad's pytrees are plain tuples, lists and dicts."""
import builtins as _b

tuple, list, dict, isinstance, type = _b.tuple, _b.list, _b.dict, _b.isinstance, _b.type
SequenceBox = DictBox = ()  # no boxes in vecgrad: isinstance(x, SequenceBox) is always False
