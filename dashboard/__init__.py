"""The evalcore dashboard: a Streamlit app over the `evalcore` package (``streamlit run dashboard/app.py``)."""
