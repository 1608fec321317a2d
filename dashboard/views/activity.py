"""Who did what: every change recorded in the workspace, with its time and the person, filterable by both."""

import streamlit as st

from evalcore.safe_text import md_text, to_csv

from dashboard import access_ui, layout, saved, state
from dashboard.page_models import activity as page

PAGE = "activity"
WRAPPED_ROW = 70
"""Pixels per row: above 64 (4 rem) Streamlit wraps a cell's text, here in up to three lines."""
state.start(PAGE, own=("who", "action"))
layout.header("Who did what", None, "Every change made to this workspace: saved evaluations, holdout reveals, ledger "
                                    "status, tag and note changes, label-set versions, judging rounds, uploads (labels, "
                                    "runs, documents, chunk maps) and deletions, each with the person who made it (their "
                                    "sign-in, or the command line's --who or login name). Nobody can edit or erase this "
                                    "record.")
st.caption(md_text(f"You: {access_ui.actor().summary()}."))
layout.words("who did what", "role", "model line", "failure ledger", "tune / holdout split")

opened = saved.workspace_opened()
if layout.failed(opened):
    layout.stop()
people, actions = page.choices()
if not people:
    st.info("Nothing recorded yet: changes appear here as people make them.")
    layout.stop()
cols = st.columns(2)
with cols[0]:
    asked = state.get("who")
    who = st.selectbox("Person", options=people, placeholder="everyone",
                       help="Show one person's changes (a signed-in email address, or a login name from the command "
                            "line).", **state.bind(PAGE, "who", asked if asked in people else None))
with cols[1]:
    asked = state.get("action")
    action = st.selectbox("Action", options=actions, placeholder="every action",
                          help="Show one kind of change.", **state.bind(PAGE, "action",
                                                                        asked if asked in actions else None))
found = page.activity(who, action)
if not layout.failed(found):
    table = found.value.table
    st.caption(md_text(found.value.caption))
    # Fixed widths that fit 1400 px, rows three lines high so a long subject or detail wraps instead of being cut.
    layout.table(table, hide_index=True, width="stretch", row_height=WRAPPED_ROW,
                 column_config={"at": st.column_config.TextColumn("when", width=150),
                                "person": st.column_config.TextColumn(width=170),
                                "action": st.column_config.TextColumn(width=130),
                                "what": st.column_config.TextColumn(width=260),
                                "details": st.column_config.TextColumn(width=490)})
    st.download_button("Download as CSV", data=to_csv(table), file_name="who_did_what.csv", mime="text/csv",
                       on_click="ignore", key=f"{PAGE}.csv")
