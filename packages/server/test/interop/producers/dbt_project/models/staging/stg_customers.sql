select customer_id, upper(country) as country
from {{ source('raw', 'customers') }}
