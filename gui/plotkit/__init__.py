"""pyqtgraph building blocks for the app's plots, apart from the tabs that use them.

Nothing here knows accelscope's physics: the blocks take arrays, texts and colours.
``axes`` (grid, row and log axes), ``bars`` (row bar plots), ``points`` (markers and lines on
log-log plots), ``text`` (labels and per-row texts), ``picking`` (hover and click), ``legend``
(a legend whose rows select).
"""
