"""One module per page, named after it: the page's model, the cached function that returns everything the page shows
as a dataclass (`dashboard.views` lays it out and computes nothing). Page models read the core (`evalcore`) and the
loaded files (`dashboard.loading`, `dashboard.computed`); nothing here draws."""
