OAMS_FAULTS = ()
def by_name(name):
    return None
