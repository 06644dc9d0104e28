#include <cstdio>

#include "core/shape/shape.h"

int main() {
  onemodel::Shape s = onemodel::Shape::Broadcast(onemodel::Shape{2, 1, 4}, onemodel::Shape{3, 1});
  std::printf("%s\n", s.ToString().c_str());
}
