"""Many ranks as one job: each rank's trace read and reduced in a Dask worker, the job combined here."""
