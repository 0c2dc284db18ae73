fetch('/api/items?limit=2').then(r => r.json()).then(j => { document.getElementById('out').textContent = JSON.stringify(j); });
document.getElementById('buy').addEventListener('click', () => {
  fetch('/api/cart', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({item: 'i-1', qty: 2})})
    .then(r => r.json()).then(j => { document.getElementById('out').textContent = 'ordered ' + j.order; });
});
