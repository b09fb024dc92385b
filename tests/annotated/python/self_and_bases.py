# self.method() binds to the enclosing class or, failing that, to a base class; super() skips the class.
# --- path: zoo/base.py ---
class Animal:
    def speak(self) -> str:
        return "..."

    def greet(self) -> str:
        return self.speak()
#              ^ calls: zoo.base.Animal.speak

    def eat(self):
        return 1

# --- path: zoo/dog.py ---
from zoo.base import Animal
#                    ^ imports: zoo.base.Animal


class Dog(Animal):
#         ^ extends: zoo.base.Animal from zoo.dog.Dog
    def speak(self) -> str:
        return super().speak() + "woof"
#              ^ calls: zoo.base.Animal.speak

    def dinner(self):
        return self.eat()
#              ^ calls: zoo.base.Animal.eat

    def hello(self):
        return self.greet()
#              ^ calls: zoo.base.Animal.greet

    def loud(self):
        return self.speak().upper()
#              ^ calls: zoo.dog.Dog.speak

    @classmethod
    def make(cls):
        return cls()
#              ^ calls: zoo.dog.Dog

    def later(self):
        def inner():
            return self.eat()
#                  ^ calls: zoo.base.Animal.eat from zoo.dog.Dog.later.inner
        return inner
