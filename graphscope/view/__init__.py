"""The Qt-free view model: the document a window shows, lane layout, LOD pyramids, descriptions, selection."""
