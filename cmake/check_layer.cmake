# Fails the build when a layer includes a header of a layer above it (docs/ARCHITECTURE.md,
# "Dependency direction"). Run by every clustersim_library target before it compiles:
#   cmake -DSOURCE_DIR=... -DLAYER_DIRS="a;b" -DALLOWED_DIRS="a;b;lower" -DALL_DIRS="every layer dir"
#         -DSTAMP=file -P check_layer.cmake
# An include is checked when it names a file under one of ALL_DIRS (the longest matching
# prefix decides its layer); it must be under one of ALLOWED_DIRS (the layer's own dirs and
# those of the libraries it links).
cmake_minimum_required(VERSION 3.25)
set(problems "")
foreach(dir IN LISTS LAYER_DIRS)
  file(GLOB_RECURSE files "${SOURCE_DIR}/${dir}/*.cpp" "${SOURCE_DIR}/${dir}/*.hpp")
  foreach(file IN LISTS files)
    file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]+\"")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([^\"]+)\".*$" "\\1" included "${line}")
      set(owner "")
      set(owner_length 0)
      foreach(candidate IN LISTS ALL_DIRS)
        string(LENGTH "${candidate}" length)
        string(FIND "${included}" "${candidate}/" at)
        if(at EQUAL 0 AND length GREATER owner_length)
          set(owner "${candidate}")
          set(owner_length ${length})
        endif()
      endforeach()
      if(owner STREQUAL "" OR owner IN_LIST ALLOWED_DIRS)
        continue()
      endif()
      file(RELATIVE_PATH relative "${SOURCE_DIR}" "${file}")
      string(APPEND problems "  ${relative} includes ${included} (layer ${owner}, above it)\n")
    endforeach()
  endforeach()
endforeach()
if(NOT problems STREQUAL "")
  string(REPLACE ";" ", " allowed "${ALLOWED_DIRS}")
  message(FATAL_ERROR "upward include in layer ${LAYER_DIRS}:\n${problems}"
                      "  it may include only: ${allowed} (docs/ARCHITECTURE.md, \"Dependency direction\")")
endif()
file(WRITE "${STAMP}" "ok\n")
