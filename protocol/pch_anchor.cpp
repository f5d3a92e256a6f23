// Anchors the precompiled headers the product's libraries share (CMakeLists.txt at the top).
