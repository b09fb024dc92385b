# Annotations are type uses (Optional and plain string forward references too); function names passed as
# arguments are callbacks; annotated parameters, return types and module variables type their receivers.
# --- path: model/types.py ---
from typing import Optional


class Item:
    def weight(self) -> int:
        return 1


class Registry:
    def add(self, item: "Item") -> None:
#                       ^ type: model.types.Item
        pass


registry = Registry()


def heaviest(items: list[Item], fallback: Optional[Item] = None) -> Item:
#                        ^ type: model.types.Item
#                                                  ^ type: model.types.Item
#                                                                   ^ type: model.types.Item
    ...


def by_weight(item: Item) -> int:
    return item.weight()
#          ^ calls: model.types.Item.weight


def sort_items(items: list[Item]):
    return sorted(items, key=by_weight)
#                            ^ callback: model.types.by_weight


def maybe(fallback: Optional[Item]):
    if fallback is not None:
        return fallback.weight()
#              ^ calls: model.types.Item.weight


def through_return():
    return heaviest([]).weight()
#          ^ calls: model.types.heaviest
#          ^ calls: model.types.Item.weight


def through_variable(item: Item):
    registry.add(item)
#   ^ calls: model.types.Registry.add
#   ^ refs: model.types.registry
