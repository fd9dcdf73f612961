select c.country, sum(o.amount) as revenue, count(o.order_id) as orders
from {{ ref('stg_orders') }} o
join {{ ref('stg_customers') }} c on o.customer_id = c.customer_id
group by c.country
